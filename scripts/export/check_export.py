"""One trainer reads one parasim export (called by scripts/check-exports.sh).

Usage: check_export.py TARGET VERSION EXPORT_FILE PLAN_OR_SCENARIO
Prints its verdict on the last line: "accepted (...)", "rejected: ..." or "skipped: ...".
"""
import json
import os
import sys


def scenario_of(path):
    doc = json.load(open(path))
    return doc.get("scenario", doc) if isinstance(doc, dict) else doc


def degrees(path):
    p = scenario_of(path).get("parallel", {})
    return {k: p.get(k, 1) for k in ("dp", "tp", "pp", "cp")}


def gloo_world():
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
    if not dist.is_initialized():
        dist.init_process_group("gloo", rank=0, world_size=1)


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


def deepspeed(export, plan):
    d = degrees(plan)
    gloo_world()
    from deepspeed.runtime.config import DeepSpeedConfig

    class Mpu:  # a Megatron-style mpu: DeepSpeed's data-parallel size comes from it
        def get_data_parallel_world_size(self): return d["dp"]
        def get_data_parallel_rank(self): return 0
        def get_model_parallel_world_size(self): return d["tp"]
        def get_model_parallel_rank(self): return 0
        def get_pipeline_model_parallel_world_size(self): return d["pp"]
    import deepspeed.comm as ds_comm
    ds_comm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)
    c = DeepSpeedConfig(export, mpu=Mpu())
    return (f"accepted (train_batch_size {c.train_batch_size} = micro "
            f"{c.train_micro_batch_size_per_gpu} x accumulation {c.gradient_accumulation_steps} x "
            f"dp {c.world_size})")


def torchtitan(version, export, plan):
    from torchtitan.config.manager import ConfigManager
    if version == "0.2":
        cfg = ConfigManager().parse_args(["--job.config_file", export])
    else:
        words = words_of(export)
        cfg = ConfigManager().parse_args(["--module", "llama3", "--config", "llama3_debugmodel"] + words)
    t, p = cfg.training, cfg.parallelism
    batch_degree = p.data_parallel_replicate_degree * p.data_parallel_shard_degree
    if t.global_batch_size % (t.local_batch_size * batch_degree) != 0:
        return (f"rejected: global batch {t.global_batch_size} is not a multiple of local "
                f"{t.local_batch_size} x dp {batch_degree} (trainer.py's assertion)")
    return (f"accepted (global {t.global_batch_size}, local {t.local_batch_size}, dp "
            f"{p.data_parallel_replicate_degree} x {p.data_parallel_shard_degree}, tp "
            f"{p.tensor_parallel_degree}, pp {p.pipeline_parallel_degree})")


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
    try:
        if target == "megatron":
            verdict = megatron(export, plan)
        elif target == "deepspeed":
            verdict = deepspeed(export, plan)
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
    print(verdict.replace("\n", " "))


if __name__ == "__main__":
    main()
