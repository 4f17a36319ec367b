"""One trainer reads one parasim export (called by scripts/check-exports.sh).

Usage: check_export.py TARGET VERSION EXPORT_FILE PLAN_OR_SCENARIO [EXPORT_NOTES]
EXPORT_NOTES is what `parasim export` wrote on standard error (the model the trainer takes from
code); the DeepSpeed check sizes its toy model from it.
Prints its verdict on the last line: "accepted (...)", "rejected: ..." or "skipped: ...". Details
(the toy run's collectives, what was skipped and why) go to standard error as "detail: ..." lines.

DeepSpeed: the config class (with the plan's mpu, and without one as AutoTP launches), then
deepspeed.initialize and one optimizer step of a toy model on the CPU (DS_ACCELERATOR=cpu, gloo,
DeepSpeed's /dev/shm all-reduce off): one process, or tp (AutoTP) and pp (PipelineModule)
processes, at most 8 (larger degrees halved, said in the verdict). The first run compiles
DeepSpeed's CPU fused_adam op (cached under ~/.cache/torch_extensions).
torchtitan: its ConfigManager with the export's flags and one user flag (--training.steps 10),
where the export's notes say a launch adds its own: after the flags, before a closing tyro
subcommand (activation-checkpoint:MODE, which tyro 1.0.17 requires last: every later word is read
as the subcommand's own, exit 2).
"""
import json
import os
import re
import socket
import sys
import tempfile
import time

USER_FLAG = ["--training.steps", "10"]  # added to torchtitan exports, as a user would


def detail(msg):
    print(f"detail: {msg}", file=sys.stderr, flush=True)


def scenario_of(path):
    doc = json.load(open(path))
    return doc.get("scenario", doc) if isinstance(doc, dict) else doc


def degrees(path):
    p = scenario_of(path).get("parallel", {})
    return {k: p.get(k, 1) for k in ("dp", "tp", "pp", "cp")}


def gloo_world():
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
    if not dist.is_initialized():
        dist.init_process_group("gloo", rank=0, world_size=1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def words_of(export):
    """The arguments of an argument-list export; `#` lines are its header."""
    return [w for line in open(export) if not line.startswith("#") for w in line.split()]


def megatron(export, plan):
    d = degrees(plan)
    world = d["dp"] * d["tp"] * d["pp"] * d["cp"]
    # As the launch the export's notes describe: WORLD_SIZE, and CUDA_DEVICE_MAX_CONNECTIONS=1.
    words = words_of(export)
    os.environ.update(WORLD_SIZE=str(world), RANK="0", LOCAL_RANK="0")
    if (d["tp"] > 1 or d["cp"] > 1) and "--use-megatron-fsdp" not in words:
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
    # What a run needs besides the plan: iterations, a learning rate, mock data and a tokenizer.
    extra = ["--train-iters", "10", "--lr", "1e-4", "--mock-data", "--tokenizer-type",
             "NullTokenizer", "--vocab-size", "1000"]
    sys.argv = ["pretrain_gpt.py"] + words + extra
    import torch
    import megatron.training.arguments as margs
    note = ""
    if not torch.cuda.is_available():
        # validate_args asks the GPU's architecture (training/utils/common_utils.py
        # get_device_arch_version, torch.cuda.get_device_capability); without a GPU, answer as
        # an H100 (9.0) would. Nothing else of the check needs a GPU.
        margs.get_device_arch_version = lambda: 9
        torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
        note = ", device capability 9.0 assumed: no GPU here"
    from megatron.training.arguments import parse_args, validate_args
    args = parse_args()
    validate_args(args)
    return (f"accepted (dp {args.data_parallel_size}, micro {args.micro_batch_size}, "
            f"global {args.global_batch_size}{note})")


# ------------------------------------------------------------------------------------ DeepSpeed

def model_shape(notes_path, export=None):
    """The model the export says DeepSpeed takes from code (parasim's note, on standard error
    and in the export's "_parasim" notes or header): "DeepSpeed takes the model from code: 40
    layers, hidden 5120, ffn 13824, 40 heads (40 kv heads), vocabulary 32000, sequence 4096,
    SwiGLU, RMSNorm, untied embeddings, ...". None when the note is missing."""
    text = "".join(open(p, errors="replace").read() + "\n" for p in (notes_path, export)
                   if p and os.path.exists(p))
    m = re.search(r"(\d+) layers, hidden (\d+), ffn (\d+), (\d+) heads \((\d+) kv heads\), "
                  r"vocabulary (\d+)", text)
    if not m:
        return None
    layers, hidden, ffn, heads, kv, vocab = map(int, m.groups())
    line = text[m.start():text.find("\n", m.start())]
    return {"layers": layers, "hidden": hidden, "ffn": ffn, "heads": heads, "kv_heads": kv,
            "vocab": vocab, "gated": "GELU" not in line, "tied": "untied" not in line}


GENERIC_SHAPE = {"layers": 4, "hidden": 1024, "ffn": 2816, "heads": 8, "kv_heads": 8,
                 "vocab": 32000, "gated": True, "tied": False}


def toy_dims(shape):
    """The toy: every layer of the model, each width divided by k = head_dim / 2 (two channels
    per head), so every weight matrix has 1/k^2 of the real elements and a bucket of B real
    elements holds what B / k^2 holds in the toy."""
    head_dim = shape["hidden"] // shape["heads"]
    k = max(1, head_dim // 2)
    return {"layers": shape["layers"], "hidden": shape["heads"] * head_dim // k,
            "kv": shape["kv_heads"] * head_dim // k, "ffn": max(1, round(shape["ffn"] / k)),
            "vocab": max(8, round(shape["vocab"] / k)), "gated": shape["gated"],
            "tied": shape["tied"], "k": k,
            "layer_params": layer_params(shape["hidden"], shape["kv_heads"] * head_dim,
                                         shape["ffn"], shape["gated"])}


def layer_params(h, kv, ffn, gated):
    return 2 * h * h + 2 * h * kv + (3 if gated else 2) * h * ffn + 2 * h


def build_toy(dims, dtype, checkpoint_layers=False):
    """A Llama-style decoder whose parameter names are the ones DeepSpeed AutoTP recognises
    (q/k/v/o_proj, gate/up/down_proj; a class named ...Model, auto_tp.py AutoTP.supported).
    Its forward works on any tensor-parallel shard of those linears."""
    import torch
    from torch import nn

    class ToyRMSNorm(nn.Module):
        # The real norm has `hidden` weights, 1/k of the layer's width: the toy's holds
        # hidden / k^2 of them (repeated over its width), so that it too has 1/k^2 of the
        # real elements and the buckets fill as they would.
        def __init__(self, n):
            super().__init__()
            self.n = n
            self.weight = nn.Parameter(torch.ones(max(1, round(n / dims["k"]))))

        def forward(self, x):
            w = self.weight.repeat_interleave(-(-self.n // self.weight.numel()))[:self.n]
            return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * w

    class ToyDecoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            h, kv, f = dims["hidden"], dims["kv"], dims["ffn"]
            self.input_layernorm = ToyRMSNorm(h)
            self.q_proj = nn.Linear(h, h, bias=False)
            self.k_proj = nn.Linear(h, kv, bias=False)
            self.v_proj = nn.Linear(h, kv, bias=False)
            self.o_proj = nn.Linear(h, h, bias=False)
            self.post_attention_layernorm = ToyRMSNorm(h)
            self.gate_proj = nn.Linear(h, f, bias=False) if dims["gated"] else None
            self.up_proj = nn.Linear(h, f, bias=False)
            self.down_proj = nn.Linear(f, h, bias=False)

        def forward(self, x):
            b, s, _ = x.shape
            y = self.input_layernorm(x)
            q, k, v = self.q_proj(y), self.k_proj(y), self.v_proj(y)
            heads, kv_heads = q.shape[-1] // 2, k.shape[-1] // 2  # local heads of a TP shard
            q = q.view(b, s, heads, 2).transpose(1, 2)
            k = k.view(b, s, kv_heads, 2).transpose(1, 2).repeat_interleave(heads // kv_heads, 1)
            v = v.view(b, s, kv_heads, 2).transpose(1, 2).repeat_interleave(heads // kv_heads, 1)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o_proj(a.transpose(1, 2).reshape(b, s, -1))
            y = self.post_attention_layernorm(x)
            up = self.up_proj(y)
            mid = torch.nn.functional.silu(self.gate_proj(y)) * up if self.gate_proj is not None \
                else torch.nn.functional.gelu(up)
            return x + self.down_proj(mid)

    class ToyLlamaModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(dims["vocab"], dims["hidden"])
            self.layers = nn.ModuleList(ToyDecoderLayer() for _ in range(dims["layers"]))
            self.norm = ToyRMSNorm(dims["hidden"])
            self.lm_head = nn.Linear(dims["hidden"], dims["vocab"], bias=False)
            if dims["tied"]:
                self.lm_head.weight = self.embed_tokens.weight

        def forward(self, ids):
            x = self.embed_tokens(ids)
            for layer in self.layers:
                if checkpoint_layers:
                    import deepspeed
                    x = deepspeed.checkpointing.checkpoint(layer, x)
                else:
                    x = layer(x)
            return self.lm_head(self.norm(x)).float().logsumexp(-1).mean()

    torch.manual_seed(0)
    return ToyLlamaModel().to(dtype), ToyDecoderLayer, ToyRMSNorm


def ds_dtype(cfg):
    import torch
    if cfg.get("bf16", {}).get("enabled"):
        return torch.bfloat16
    if cfg.get("fp16", {}).get("enabled"):
        return torch.float16
    return torch.float32


class CollectiveCounter:
    """Counts the gradient reductions DeepSpeed issues, at its communication backend (cdb: one
    call per collective, whichever wrapper issued it), and ZeRO-3's bucket flushes."""
    OPS = ("all_reduce", "all_reduce_coalesced", "reduce_scatter", "reduce_scatter_tensor",
           "inference_all_reduce")

    def __init__(self):
        self.calls = []  # (op, elements)
        self.flushes = []  # ZeRO-3 bucket elements at each flush
        self.on = False

    def install(self):
        import deepspeed.comm.comm as dcomm
        cdb = dcomm.cdb
        for op in self.OPS:
            fn = getattr(cdb, op, None)
            if fn is None:
                continue

            def wrapped(*a, _fn=fn, _op=op, **k):
                if self.on:
                    t = next((k[n] for n in ("input_tensor", "input_list", "tensors", "tensor")
                              if n in k), None)
                    if t is None and a:
                        t = a[1] if _op.startswith("reduce_scatter") and len(a) > 1 else a[0]
                    n = sum(x.numel() for x in t) if isinstance(t, (list, tuple)) else \
                        (t.numel() if hasattr(t, "numel") else 0)
                    # AutoTP's row-parallel linears all-reduce activations on the tensor-parallel
                    # group (module_inject/layers.py): not gradient reductions.
                    from deepspeed.utils import groups
                    tp_group = getattr(groups, "_TENSOR_MODEL_PARALLEL_GROUP", None)
                    group = k.get("group", a[2] if _op == "all_reduce" and len(a) > 2 else None)
                    if tp_group is None or group is not tp_group:
                        self.calls.append((_op, n))
                return _fn(*a, **k)
            setattr(cdb, op, wrapped)
        try:
            from deepspeed.runtime.zero.stage3 import DeepSpeedZeroOptimizer_Stage3 as S3
        except ImportError:
            return
        name = "_DeepSpeedZeroOptimizer_Stage3__reduce_and_partition_ipg_grads"
        orig = getattr(S3, name, None)
        if orig is None:
            return

        def flush(opt, dtype, _orig=orig):
            if self.on and opt.ipg_buckets[dtype].params:
                self.flushes.append(opt.ipg_buckets[dtype].elements)
            return _orig(opt, dtype)
        setattr(S3, name, flush)

    def take(self):
        calls, flushes = self.calls, self.flushes
        self.calls, self.flushes = [], []
        return calls, flushes


class StubMpu:
    """A Megatron-style mpu over this process's groups, answering the plan's data-parallel size
    (so DeepSpeedConfig checks the export's batch identity as the mpu launch would)."""

    def __init__(self, dp, tp, pp):
        import torch.distributed as dist
        self.dp, self.tp, self.pp = dp, tp, pp
        self.world = dist.group.WORLD
        self.own = dist.new_group([dist.get_rank()])

    def get_data_parallel_world_size(self): return self.dp
    def get_data_parallel_rank(self): return 0
    def get_data_parallel_group(self): return self.own
    def get_model_parallel_world_size(self): return self.tp
    def get_model_parallel_rank(self): return 0
    def get_model_parallel_group(self): return self.world
    def get_tensor_model_parallel_world_size(self): return self.tp
    def get_tensor_model_parallel_rank(self): return 0
    def get_tensor_model_parallel_group(self): return self.world
    def get_pipeline_model_parallel_world_size(self): return self.pp


def ds_env():
    # DeepSpeed's CPU accelerator (accelerator/real_accelerator.py: DS_ACCELERATOR=cpu; gloo
    # without oneCCL, cpu_accelerator.py); LOCAL_SIZE is its device count.
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    os.environ.setdefault("LOCAL_SIZE", os.environ.get("WORLD_SIZE", "1"))


def ds_no_shm():
    """Keeps DeepSpeed's CPU backend on gloo: its shared-memory all-reduce (comm/torch.py
    TorchBackend.__init__ -> build_shm_op, ops/csrc/cpu/comm/shm.cpp) maps a 69 MB
    /dev/shm/deepspeed_allreduce_buffer_* per rank and never unlinks it, so repeated checks fill
    /dev/shm (RAM). Call before deepspeed.comm is initialized."""
    import importlib
    # (the module itself: `import deepspeed.comm.torch as m` binds the `torch` that
    # deepspeed/comm/__init__.py imported)
    importlib.import_module("deepspeed.comm.torch")
    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda: None


def ds_toy_run(rank, world, port, job, outdir):
    """One process of the toy run: deepspeed.initialize(model=toy, config=the export) and one
    optimizer step (gradient_accumulation_steps micro-batches), counting the reductions."""
    result = {"rank": rank}
    if world > 1:  # keep what a dying process says (gloo aborts) for the verdict
        err = os.open(os.path.join(outdir, f"rank{rank}.err"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.dup2(err, 2)
        import faulthandler
        faulthandler.enable()  # a gloo abort then says where (in detail)
    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_SIZE=str(world))
        ds_env()
        import logging
        from datetime import timedelta
        import torch
        import deepspeed
        from deepspeed.utils import logger as ds_logger
        ds_logger.setLevel(logging.ERROR)
        ds_no_shm()
        if not torch.distributed.is_initialized():
            deepspeed.init_distributed(dist_backend="gloo", auto_mpi_discovery=False,
                                       timeout=timedelta(seconds=job["timeout"]))
        cfg = job["config"]
        dtype = ds_dtype(cfg)
        dims = job["dims"]
        micro = cfg.get("train_micro_batch_size_per_gpu", 1)
        gas = cfg.get("gradient_accumulation_steps", 1)
        counter = CollectiveCounter()
        seq = 8
        torch.manual_seed(1234)
        if job["mode"] == "pipe":
            from torch import nn
            from deepspeed.pipe import PipelineModule
            from deepspeed.runtime.pipe.topology import PipeModelDataParallelTopology
            model, Layer, _ = build_toy(dims, dtype)

            class ToyPipeModel(PipelineModule):
                # AutoTP finds the layers to shard in a ModuleList (module_inject/auto_tp.py
                # AutoTP.get_module_list) of a "...Model" (AutoTP.supported): this stage's
                # decoder layers are listed in one, beside PipelineModule's own registration.
                # (One wrapper per layer instead trips AutoTP.update_policy_list, which
                # concatenates a list and a set on the third sighting of the same class.)
                def __init__(self, **kw):
                    super().__init__(**kw)
                    self.tp_layers = nn.ModuleList(m for m in self.children()
                                                   if isinstance(m, Layer))

            layers = [model.embed_tokens] + list(model.layers) + [model.norm, model.lm_head]
            # The Megatron-style grid: pipe x model (tensor) x data, dp 1 in the toy world.
            topology = PipeModelDataParallelTopology(num_pp=job["pp"], num_mp=job["tp"],
                                                     num_dp=1)
            pm = ToyPipeModel(layers=layers, topology=topology,
                              loss_fn=lambda logits, labels: logits.float().logsumexp(-1).mean(),
                              partition_method="uniform",
                              activation_checkpoint_interval=1 if job["checkpoint"] else 0)
            engine, opt, _, _ = deepspeed.initialize(model=pm, model_parameters=[
                p for p in pm.parameters() if p.requires_grad], config=cfg)
            result["optimizer"] = type(opt).__name__ if opt is not None else "none"
            counter.install()

            def batches():
                while True:
                    ids = torch.randint(0, dims["vocab"], (micro, seq))
                    yield ids, ids
            counter.on = True
            engine.train_batch(data_iter=batches())
            counter.on = False
            calls, flushes = counter.take()
            result["steps"] = [{"calls": calls, "flushes": flushes}]
        else:
            model, _, _ = build_toy(dims, dtype, checkpoint_layers=job["checkpoint"])
            if job["checkpoint"]:
                # As Megatron-DeepSpeed does: the activation_checkpointing section configures
                # deepspeed.checkpointing, which the model's layers call.
                deepspeed.checkpointing.configure(None, deepspeed_config=cfg)
            engine, opt, _, _ = deepspeed.initialize(model=model,
                                                     model_parameters=model.parameters(),
                                                     config=cfg)
            result["optimizer"] = type(opt).__name__ if opt is not None else "none"
            result["dp_world_size"] = engine.dp_world_size
            counter.install()
            steps = []
            for _ in range(gas):
                ids = torch.randint(0, dims["vocab"], (micro, seq))
                counter.on = True
                loss = engine(ids)
                engine.backward(loss)
                back_calls, back_flushes = counter.take()
                counter.on = True
                engine.step()
                counter.on = False
                step_calls, _ = counter.take()
                steps.append({"calls": back_calls, "flushes": back_flushes,
                              "step_calls": step_calls})
            result["steps"] = steps
        result["ok"] = True
        result["mode"] = job["mode"]
    except BaseException as e:  # noqa: BLE001: the trainer's own error is the verdict
        import traceback
        result["error"] = f"{type(e).__name__}: {str(e)[:400]}"
        result["where"] = traceback.format_exc()[-1500:]
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


def ds_spawn(world, job, timeout):
    """Runs ds_toy_run in `world` fresh processes (one gloo group on this CPU); returns rank
    0's result, or the first rank's error."""
    import torch.multiprocessing as mp
    port = free_port()
    with tempfile.TemporaryDirectory() as outdir:
        ctx = mp.start_processes(ds_toy_run, args=(world, port, job, outdir), nprocs=world,
                                 join=False, start_method="spawn")
        deadline = time.time() + timeout
        timed_out = False
        while True:
            try:
                if ctx.join(timeout=5):
                    break
            except Exception as e:  # a child died without writing its result
                detail(f"toy process failed: {str(e)[:300]}")
                break
            if time.time() > deadline:
                timed_out = True
                break
        for p in ctx.processes:  # the ranks left waiting on a dead one, or past the deadline
            if p.is_alive():
                p.kill()
            p.join(timeout=10)
        results = []
        for r in range(world):
            path = os.path.join(outdir, f"rank{r}.json")
            if os.path.exists(path):
                results.append(json.load(open(path)))
        if timed_out and len(results) < world:
            return {"error": f"the {world}-process toy run did not finish in {timeout} s"}
        for r in results:
            if "error" in r:
                return r
        if len(results) < world:
            said = []
            for r in range(world):
                path = os.path.join(outdir, f"rank{r}.err")
                if os.path.exists(path):
                    said += [ln.strip() for ln in open(path, errors="replace")
                             if "what():" in ln or "Error" in ln]
            for r in range(world):
                path = os.path.join(outdir, f"rank{r}.err")
                if os.path.exists(path) and "Fatal Python error" in open(path).read():
                    stack = [ln.strip() for ln in open(path) if ln.strip().startswith("File ")]
                    detail(f"rank {r} died in: " + " <- ".join(stack[:8]))
                    break
            return {"error": "a process died: " + (said[-1][:400] if said else "no message")}
        return results[0]


# ZeRO's thresholds counted in elements: the toy's weights have 1/k^2 of the real elements, so
# these are divided by k^2 to act on the toy as the exported values act on the model.
# (allgather_bucket_size is left as exported: ZeRO-1/2 only chunk by it, and its alignment
# assertion, stage_1_and_2.py, should see the real value.)
ELEMENT_THRESHOLDS = ("reduce_bucket_size", "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                      "stage3_max_live_parameters", "stage3_param_persistence_threshold",
                      "stage3_max_reuse_distance")


def toy_zero(zero, dims):
    out = dict(zero)
    k2 = dims["k"] ** 2
    for key in ELEMENT_THRESHOLDS:
        if key in out and isinstance(out[key], (int, float)) and out[key] > 0:
            out[key] = max(1, int(round(out[key] / k2)))
    if out.get("stage", 0) >= 1 and "reduce_bucket_size" not in out:
        out["reduce_bucket_size"] = max(1, int(round(5e8 / k2)))  # DeepSpeed's default, scaled
    return out


def runs(values):
    """[0, 0, 0, 5] -> "0 x3, 5"."""
    out = []
    for v in values:
        if out and out[-1][0] == v:
            out[-1][1] += 1
        else:
            out.append([v, 1])
    return ", ".join(f"{v} x{n}" if n > 1 else f"{v}" for v, n in out)


def summarize_reductions(res, cfg, dims):
    """How many gradient reductions each micro-batch's backward (and engine.step) issued, and
    for ZeRO-3 what the exported bucket means at the model's full size."""
    steps = res.get("steps") or []
    if not steps:
        return ""
    zero = cfg.get("zero_optimization", {})
    stage = zero.get("stage", 0)
    reduce_ops = ("all_reduce", "all_reduce_coalesced", "reduce_scatter", "reduce_scatter_tensor")
    per_backward = [sum(1 for op, _ in s["calls"] if op in reduce_ops) for s in steps]
    at_step = [sum(1 for op, _ in s.get("step_calls", []) if op in reduce_ops) for s in steps]
    kinds = sorted({op for s in steps for op, _ in s["calls"] + s.get("step_calls", [])
                    if op in reduce_ops})
    detail(f"reductions per backward [{runs(per_backward)}], in engine.step [{runs(at_step)}], "
           f"ops {kinds}, ZeRO-3 flushes (toy elements) {[s['flushes'] for s in steps[:1]]}")
    if stage != 3:
        text = f"gradient reductions per micro-batch backward [{runs(per_backward)}]"
        if sum(at_step):
            text += f", in engine.step [{runs(at_step)}]"
        if res.get("mode") == "pipe":
            text = f"gradient reductions in train_batch: {per_backward[0]}"
        if stage == 0 and res.get("mode") != "pipe":
            text += (" (ZeRO-0: the engine's fixed 5e8-gradient buckets, engine.py "
                     "MEMORY_OPT_ALLREDUCE_SIZE, are not scaled to the toy)")
        return text
    flushes = steps[0]["flushes"]
    k2 = dims["k"] ** 2
    bucket = zero.get("reduce_bucket_size", 500000000)
    # A rank's layer: AutoTP shards its matrices over autotp_size ranks (norms stay whole: the
    # sharded count is a little under the rank's).
    lp = dims["layer_params"] // max(1, cfg.get("tensor_parallel", {}).get("autotp_size", 1))
    largest = max(flushes) * k2 if flushes else 0
    nbytes = ds_dtype(cfg).itemsize
    memory = (f"ipg buffer {bucket * nbytes / 1e9:.1f} GB (contiguous_gradients: a buffer of "
              f"reduce_bucket_size elements, allocated at init)"
              if zero.get("contiguous_gradients", True) else
              f"no ipg buffer (contiguous_gradients false): up to {largest * nbytes / 1e9:.1f} GB "
              f"of unreduced gradients wait for a flush")
    return (f"ZeRO-3 reduce_bucket_size {bucket} = {bucket / lp:.1f} layers' gradients: "
            f"{per_backward[0]} reduce-scatter(s) in the first backward over {dims['layers']} "
            f"layers (toy at 1/{dims['k']} width, bucket / {k2}; largest flush "
            f"{largest / lp:.1f} layers); per-layer reduce-scatters need a bucket of about one "
            f"layer ({lp} elements); {memory}")


def deepspeed(export, plan, notes):
    d = degrees(plan)
    ds_env()
    gloo_world()
    ds_no_shm()
    from deepspeed.runtime.config import DeepSpeedConfig
    from deepspeed.runtime.tensor_parallel.init_utils import load_ds_config
    import deepspeed.comm as ds_comm
    ds_comm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)
    cfg = load_ds_config(export)  # DeepSpeed's own reader (hjson: `//` comments allowed)
    warnings = []
    try:
        json.load(open(export))
    except ValueError:
        warnings.append("its `//` header is not JSON: HF Trainer / Accelerate (json.load) "
                        "reject the file; --json writes it without comments")

    # 1. The config class with the plan's mpu: the batch identity with the plan's dp.
    c = DeepSpeedConfig(export, mpu=StubMpu(d["dp"], d["tp"], d["pp"]))
    derived = "" if "train_batch_size" in cfg else " (derived)"
    verdict = (f"train_batch_size{derived} {c.train_batch_size} = micro "
               f"{c.train_micro_batch_size_per_gpu}"
               f" x accumulation {c.gradient_accumulation_steps} x dp {c.world_size}")
    # 2. Without an mpu (AutoTP's own launch, HF Trainer): DeepSpeedConfig's world size is the
    # process count (config.py: dist.get_world_size()), here tp x dp, not divided by autotp_size.
    if d["tp"] > 1 and d["pp"] == 1:
        import deepspeed.runtime.config as ds_config_mod
        world = d["dp"] * d["tp"]
        real = ds_config_mod.dist.get_world_size
        ds_config_mod.dist.get_world_size = lambda *a, **k: world
        try:
            c2 = DeepSpeedConfig(export)
            detail(f"without an mpu (world {world}): train_batch_size {c2.train_batch_size} = "
                   f"micro {c2.train_micro_batch_size_per_gpu} x accumulation "
                   f"{c2.gradient_accumulation_steps} x {c2.world_size}")
        except AssertionError as e:
            warnings.append(f"without an mpu (AutoTP's launch; world {world}) DeepSpeedConfig "
                            f"rejects it: {str(e).split('world_size ')[-1]}")
        finally:
            ds_config_mod.dist.get_world_size = real

    # 3. The runtime: deepspeed.initialize and one step of a toy model, in a toy world of 1, tp
    # (AutoTP) or pp (PipelineModule) CPU processes without data parallelism: its
    # train_batch_size is micro x accumulation x (the toy world's DeepSpeedConfig world size);
    # the batch identity at the plan's size is steps 1 and 2's.
    shape = model_shape(notes, export)
    if shape is None:
        detail("no model note from parasim export: the toy is a generic 4-layer model")
    dims = toy_dims(shape or GENERIC_SHAPE)
    micro = cfg.get("train_micro_batch_size_per_gpu", 1)
    gas = cfg.get("gradient_accumulation_steps", 1)
    job = {"dims": dims, "pp": d["pp"], "timeout": 120,
           "checkpoint": "activation_checkpointing" in cfg}
    if d["cp"] > 1:
        return (f"accepted ({verdict}; deepspeed.initialize skipped: context parallelism has no "
                f"DeepSpeed mapping){fmt_warnings(warnings)}")
    # At most 8 toy processes: a larger pp x tp is halved (the larger degree first); the toy
    # then runs the same combination of engines at smaller degrees, and says so.
    pp, tp = d["pp"], d["tp"]
    while pp * tp > 8:
        if tp >= pp and tp % 2 == 0:
            tp //= 2
        elif pp % 2 == 0:
            pp //= 2
        else:
            return (f"accepted ({verdict}; deepspeed.initialize skipped: pp x tp = "
                    f"{d['pp'] * d['tp']} processes){fmt_warnings(warnings)}")
    reduced = (f", reduced from pp {d['pp']} x tp {d['tp']}: autotp_size {tp} in the toy"
               if (pp, tp) != (d["pp"], d["tp"]) else "")
    toy_cfg = dict(cfg)
    if tp != d["tp"]:
        toy_cfg["tensor_parallel"] = dict(cfg.get("tensor_parallel", {}), autotp_size=tp)
    if pp > 1:
        # PipelineModule needs num_stages (x tensor) processes (runtime/pipe/module.py:
        # num_stages must divide the world size); its grid's dp is the config's world size.
        world, toy_dp = pp * tp, 1
        dims = dict(dims, tied=False)  # a tied head across stages needs TiedLayerSpec
        job.update(mode="pipe", dims=dims, pp=pp, tp=tp)
        tp_note = f" x AutoTP {tp}" if tp > 1 else ""
        where = f"{world} CPU processes (PipelineModule of {pp} stages{tp_note}{reduced})"
    elif tp > 1:
        # AutoTP shards over a tp x (world / tp) mesh (utils/groups.py _init_tp_mesh_device):
        # tp processes, no mpu (AutoTP's own launch), so DeepSpeedConfig's world is tp.
        world, toy_dp = tp, tp
        job.update(mode="autotp")
        where = f"{world} CPU processes (AutoTP {world}, no mpu{reduced})"
    else:
        world, toy_dp = 1, 1
        job.update(mode="plain")
        where = "1 CPU process"
    # The export's batch keys as written: a train_batch_size it wrote is re-sized to the toy's
    # world; one it left out stays out (under AutoTP DeepSpeed derives it, and with ZeRO-3 it
    # builds a second DeepSpeedConfig in zero.Init whose world is AutoTP's data-parallel size:
    # a written train_batch_size cannot hold for both).
    job["config"] = dict(toy_cfg, zero_optimization=toy_zero(cfg.get("zero_optimization", {}),
                                                             dims))
    if "train_batch_size" in cfg:
        job["config"]["train_batch_size"] = micro * gas * toy_dp
    if world > 1:
        res = ds_spawn(world, job, timeout=job["timeout"] + 60)
    else:
        with tempfile.TemporaryDirectory() as outdir:
            ds_toy_run(0, 1, os.environ["MASTER_PORT"], job, outdir)
            res = json.load(open(os.path.join(outdir, "rank0.json")))
    if "error" in res:
        if res.get("where"):
            detail("toy run traceback: " + res["where"].replace("\n", " | "))
        why = ""
        if pp > 1 and tp > 1 and "collective mismatch" in res["error"]:
            why = (" (AutoTP's data-parallel groups come from its own (world / tp) x tp mesh, "
                   "utils/groups.py _init_tp_mesh_device, which ignores the pipeline grid: they "
                   "pair ranks of different stages, and DeepSpeedEngine._broadcast_model "
                   "broadcasts one stage's parameters over them to another)")
        return f"rejected: deepspeed.initialize / step on {where}: {res['error']}{why}"
    counts = summarize_reductions(res, cfg, dims)
    return (f"accepted ({verdict}; deepspeed.initialize + one step on {where}: "
            f"{res.get('optimizer')}{'; ' + counts if counts else ''}){fmt_warnings(warnings)}")


def fmt_warnings(warnings):
    return "".join(f"; WARNING: {w}" for w in warnings)


# ----------------------------------------------------------------------------------- torchtitan

def tyro_message(text):
    """The gist of a tyro error box: from "Unrecognized" to the suggestions, without the frame."""
    text = re.sub(r"[│╭╮╰╯─━|+]+|-{3,}", " ", text)
    start = text.find("Unrecognized")
    text = text[start:] if start >= 0 else text
    for stop in ("Perhaps you meant", "For full helptext"):
        if stop in text:
            text = text[:text.index(stop)]
    return re.sub(r"\s+", " ", text).strip()[:600]


def torchtitan_parse(version, export, extra):
    import contextlib
    import io
    from torchtitan.config.manager import ConfigManager
    if version == "0.2":
        args = ["--job.config_file", export] + extra
    else:
        words = words_of(export)
        # A closing subcommand stays last (the export's notes say so): the user's flags go
        # before it.
        closing = words[-1:] if words and ":" in words[-1] and not words[-1].startswith("-") else []
        args = (["--module", "llama3", "--config", "llama3_debugmodel"] +
                words[:len(words) - len(closing)] + extra + closing)
    err = io.StringIO()
    os.environ.setdefault("COLUMNS", "200")
    sys.argv = ["torchtitan.train"]  # tyro names the program after argv[0] in its messages
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            return ConfigManager().parse_args(args), None
    except SystemExit as e:
        return None, f"exit {e.code}: {tyro_message(err.getvalue())}"


def torchtitan(version, export, plan):
    import torchtitan as tt
    where = os.path.dirname(tt.__file__)
    # 0.2 reads a TOML (config/job_config.py); 0.3 a config_registry function (config/configs.py).
    is_02 = os.path.exists(os.path.join(where, "config", "job_config.py"))
    if (version == "0.2") != is_02:
        return (f"skipped: torchtitan {'0.2' if version == '0.2' else '0.3'} not importable "
                f"(found the {'0.2' if is_02 else '0.3'} layout at {where})"
                f"{'; set TORCHTITAN02_PATH' if version == '0.2' else ''}")
    cfg, error = torchtitan_parse(version, export, [])
    if error:
        return f"rejected: ConfigManager: {error}"
    cfg2, error = torchtitan_parse(version, export, USER_FLAG)
    if error:
        return (f"rejected: the export's flags with a user flag ({' '.join(USER_FLAG)}) where "
                f"its notes say: ConfigManager: {error}")
    if cfg2.training.steps != int(USER_FLAG[1]):
        return (f"rejected: a user flag after the export ({' '.join(USER_FLAG)}) was not applied "
                f"(training.steps {cfg2.training.steps})")
    t, p = cfg.training, cfg.parallelism
    batch_degree = p.data_parallel_replicate_degree * p.data_parallel_shard_degree
    if t.global_batch_size % (t.local_batch_size * batch_degree) != 0:
        return (f"rejected: global batch {t.global_batch_size} is not a multiple of local "
                f"{t.local_batch_size} x dp {batch_degree} (trainer.py's assertion)")
    # The model it builds (0.3: the config function's model_spec; 0.2: model.name / flavor) and
    # the expert-parallel degree, for a model with experts.
    spec = getattr(cfg, "model_spec", None) or getattr(cfg, "model", None)
    model = f"{getattr(spec, 'name', '?')} {getattr(spec, 'flavor', '?')}"
    ep = getattr(p, "expert_parallel_degree", 1)
    return (f"accepted (model {model}, global {t.global_batch_size}, local "
            f"{t.local_batch_size}, dp {p.data_parallel_replicate_degree} x "
            f"{p.data_parallel_shard_degree}, tp {p.tensor_parallel_degree}, pp "
            f"{p.pipeline_parallel_degree}{f', ep {ep}' if ep > 1 else ''}; a user flag where "
            f"the notes say is applied)")


def shampoo(export, plan):
    import torch
    code = open(export).read()
    if "ista_daslab_optimizers" in code:
        try:
            import ista_daslab_optimizers  # noqa: F401
        except ImportError as e:
            return f"skipped: DASH not importable ({e}); set DASH_PATH"
    if "DDPDistributedConfig" in code or "Dash" in code:
        gloo_world()
    scope = {"model": torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(32, 8))}
    exec(compile(code, export, "exec"), scope)
    return f"accepted ({type(scope['optimizer']).__name__})"


def main():
    target, version, export, plan = sys.argv[1:5]
    notes = sys.argv[5] if len(sys.argv) > 5 else None
    try:
        if target == "megatron":
            verdict = megatron(export, plan)
        elif target == "deepspeed":
            verdict = deepspeed(export, plan, notes)
        elif target == "torchtitan":
            verdict = torchtitan(version, export, plan)
        else:
            verdict = shampoo(export, plan)
    except ImportError as e:
        verdict = f"skipped: not installed ({e})"
    except SystemExit as e:
        verdict = f"rejected: exited with {e.code}"
    except BaseException as e:  # the trainer's own assertion or error is the verdict
        verdict = f"rejected: {type(e).__name__}: {str(e)[:400]}"
    print(verdict.replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
