#!/usr/bin/env python3
"""Converts the published development set into parasim validation files.

Reads the pristine published files in scenarios/validation/published/ (vTrain's ground truth,
Megatron-LM 2021 Table 1, the Zero Bubble paper's main results) and writes one parasim
validation file per source to scenarios/validation/<name>.json (format: docs/validation.md).
Each case becomes a complete parasim scenario, or a "not_expressible" entry naming the feature
parasim lacks; the published case is copied verbatim beside it.

Every mapping choice (which cluster preset, NIC, precision, recompute, schedule, ...) is a row
of the MAPPING table below, with its reason and source; the same rows are written into each
output file's "mapping" text and listed in docs/validation.md. Change a choice there, not in the
conversion code.

Usage:
  scripts/validation/make_dev_set.py            write scenarios/validation/*.json
  scripts/validation/make_dev_set.py --check    exit 1 if the checked-in files differ from the
                                                output (the test tests/validation runs this)
Python 3 standard library only.
"""

import argparse
import json
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "scenarios" / "validation" / "published"
OUTPUT = ROOT / "scenarios" / "validation"

# Uneven pipeline stages (Zero Bubble's runs put one layer fewer on the first and last stage):
# written as parallel.stage_layers (docs/scenario.md). False maps those cases to not expressible,
# as before the key existed.
EMIT_STAGE_LAYERS = True


def choice(value, reason):
    """One mapping decision: the value written into the scenarios and why."""
    return {"value": value, "reason": reason}


# The mapping table: per published file, every choice with its reason and source.
MAPPING = {
    "vtrain": {
        "published": "vtrain.json",
        "cluster_preset": choice(
            "dgx-a100-80gb",
            "vTrain's repository names the GPU only as 'A100' (gpu_name=A100 in its configs) and "
            "does not say 40 or 80 GB; the 80 GB DGX A100 preset is used and this is an "
            "assumption"),
        "gpus_per_node": choice(
            "min(8, num_gpus)",
            "vTrain's configs set node_size=8; single-node runs use 2, 4 or 8 GPUs of one "
            "node, so the node is as large as the run"),
        "nodes": choice("max(1, num_gpus / 8)", "8 GPUs per node (node_size=8)"),
        "inter_node_bandwidth": choice(
            "100 Gb/s",
            "per GPU: vTrain's validation configs give inter_node_bandwidth=800 Gbps per "
            "8-GPU node (vTrainConfig docstring: total inter-node bandwidth in Gbps); no effect "
            "on single-node runs"),
        "precision": choice(
            "fp16",
            "not stated by vTrain; Megatron-DeepSpeed's GPT example scripts pass --fp16 "
            "(e.g. examples/curriculum_learning/ds_pretrain_gpt2.sh)"),
        "recompute": choice(
            "full",
            "the released configs set use_checkpoint=true (activation checkpointing of every "
            "layer)"),
        "schedule": choice("1f1b", "the released configs set pipeline_scheduling=1f1b"),
        "profile": choice(
            "profiles/vtrain-a100-nccl-tests.json",
            "the all-reduce times vTrain published for the A100 machine its ground truth ran on "
            "(nccl-tests all_reduce_perf on 2 to 8 GPUs of one node, 1 MiB to 1 GiB: "
            "trace/a100/AR_GPU{n}_1M_1024M_LUT at f8dda84, the tables vTrain's own predictor "
            "reads), written as a parasim profile by scripts/validation/vtrain_nccl_profile.py; "
            "every other figure, and collectives over several nodes, stay analytical"),
        "framework": choice(
            "megatron-deepspeed",
            "vTrain's ground truth was measured on Megatron-DeepSpeed (its README and "
            "docker/Dockerfile: microsoft/Megatron-DeepSpeed with DeepSpeed, PyTorch 2.0.1); the "
            "preset models its 2022-23 layer (two syncs per layer forward), DeepSpeed's pipeline "
            "engine and fp16 optimizer (docs/frameworks.md)"),
        "dp_bucket": choice(
            "the model's whole gradient size",
            "the released configs set use_gradient_bucket=false: one data-parallel all-reduce "
            "after the backward. parasim reduces a bucket when it holds at least dp_bucket "
            "bytes or the backward has ended, so a bucket as large as all the model's fp16 "
            "gradients (2 bytes x every parameter, rounded up to a whole MB: an upper bound on "
            "any stage's share) gives exactly one all-reduce at the end"),
        "vocab": choice(50257, "not in the CSV; vTrainConfig's default vocabulary size"),
        "learned_positions": choice(True, "GPT: a learned position table"),
        "tied_embeddings": choice(True, "Megatron's GPT ties the output head to the embedding"),
        "dropout": choice(True, "Megatron's GPT defaults (hidden and attention dropout 0.1)"),
        "attention": choice(
            "unfused",
            "Megatron-DeepSpeed's default core attention of that era (scores and "
            "probabilities materialised)"),
        "zero_stage": choice(0, "vTrain models no ZeRO; the CSV gives no ZeRO stage"),
        "sequence_parallel": choice(False, "not stated; off by default in Megatron-DeepSpeed"),
        "measured": choice("/measured/iteration_ms", "the iteration time vTrain measured, in ms"),
        "family": choice(
            "vtrain-single-node if num_gpus <= 8, else vtrain-multi-node",
            "single-node and multi-node runs miss for different reasons"),
    },
    "megatron2021-table1": {
        "published": "megatron2021-table1.json",
        "cluster_preset": choice(
            "dgx-a100-80gb",
            "Selene's DGX A100 80GB nodes; the preset's 200 Gb/s per GPU are the published "
            "8 x 200 Gb/s HDR InfiniBand HCAs per node for application traffic"),
        "nodes": choice("num_gpus / 8", "8 GPUs per DGX A100 node"),
        "precision": choice("fp16", "the paper trains in 16-bit mixed precision (fp16)"),
        "recompute": choice(
            "full",
            "the published recompute setting: every transformer layer checkpointed"),
        "schedule": choice(
            "interleaved-1f1b with chunks = virtual_pipeline_stages when > 1, else 1f1b",
            "the sc21 scripts' --num-layers-per-virtual-pipeline-stage; the 1T run sets none "
            "(see its caveat) and is non-interleaved"),
        "framework": choice(
            "megatron-lm-2021; ddp_impl torch: with gradient_reduction overlapped",
            "the SC21 scripts at Megatron-LM de7dc40f88 (examples/sc21); DDP=torch runs use "
            "PyTorch DDP, whose buckets are reduced during the backward"),
        "dp_bucket": choice(
            "ddp_impl local: the model's whole gradient size; torch: PyTorch DDP's 25 MB",
            "Megatron-LM's local DDP (megatron/model/distributed.py, allreduce_gradients) "
            "coalesces the gradients and all-reduces them once after the backward; PyTorch "
            "DDP reduces 25 MB buckets during the backward"),
        "vocab": choice("the published vocab_size (51200)", "as published"),
        "learned_positions": choice(True, "GPT: a learned position table"),
        "tied_embeddings": choice(True, "Megatron's GPT ties the output head to the embedding"),
        "dropout": choice(True, "Megatron's GPT defaults"),
        "attention": choice("unfused", "Megatron-LM 2021's core attention (no FlashAttention)"),
        "zero_stage": choice(0, "the published zero_stage"),
        "sequence_parallel": choice(False, "the published sequence_parallel"),
        "measured": choice(
            "/derived/iteration_s_derived",
            "the paper prints TFLOP/s per GPU; the step time is derived from it with the "
            "paper's own FLOP count (Eq. 3, which counts the recomputed forward): "
            "iteration_s = F / (GPUs x TFLOP/s), about 0.4 % uncertain from the 3-digit "
            "rounding of the published TFLOP/s"),
        "family": choice("megatron-table1", "one family: Megatron-LM on A100s, 1.7B to 1T"),
    },
    "zerobubble-main": {
        "published": "zerobubble-main.json",
        "cluster_preset": choice(
            "dgx-a100-80gb",
            "A100 SXM 80GB, 8 per node; the paper's RoCE network is not specified further, so "
            "the preset's 200 Gb/s per GPU is an assumption"),
        "nodes": choice("num_gpus / 8", "8 GPUs per node, up to 4 nodes"),
        "parallel": choice("pp = num_gpus, tp = dp = 1", "pure pipeline parallelism"),
        "precision": choice(
            "fp16",
            "not stated by the paper; the implementation's example scripts "
            "(sail-sg/zero-bubble-pipeline-parallelism, examples/pretrain_zero_bubble.sh) "
            "train with --fp16 unless FP32 is set"),
        "recompute": choice(
            "none", "not stated; Megatron-LM recomputes nothing unless asked"),
        "schedule": choice(
            "1F1B -> 1f1b; ZB-H1 -> zb-h1; ZB-H2 -> zb-h2; ZB-1p -> zb-1p; ZB-2p -> zb-2p "
            "(optimizer post-validation on, as published); ZB-2p-allreduce-sync -> zb-2p with "
            "optimizer_post_validation false; 1F1B-I -> interleaved-1f1b with every layer its "
            "own chunk; ZB-V -> not expressible",
            "parasim's zb-1p and zb-2p run the paper's automatic scheduling heuristic (sec. 3.1) "
            "on its own simulated F, B, W and transfer times rather than on the profiled ones; "
            "the ablation replaces post-validation by a synchronisation before the optimizer "
            "step (sec. 4); the paper's 1F1B-I makes every transformer layer its own chunk "
            "(chunks = (layers + 2) / pp): the Zero Bubble fork pads the layer count to a "
            "multiple of pp and empties the first chunk of the first stage and the last chunk "
            "of the last stage, which then run Megatron's no-op layer "
            "(--allow-padding-num-layers, ParallelTransformer.get_offset and "
            "NoopTransformerLayer in megatron/legacy/model/transformer.py at 39f2c186; the "
            "fork's code of 2024-08, after the paper), written as parallel.stage_layers with 0 "
            "for those two virtual stages"),
        "stage_layers": choice(
            "first and last stage one layer fewer" if EMIT_STAGE_LAYERS
            else "not expressible (uneven stages)",
            "the paper's first and last pipeline stages hold one fewer transformer layer "
            "(Table 3 note), written as parallel.stage_layers (EMIT_STAGE_LAYERS in this "
            "script)"),
        "vocab": choice(
            50257,
            "not stated by the paper; the fork's example script of the paper's time "
            "(examples/pretrain_zero_bubble.sh at 425b42e5, 2023-11-17) passes "
            "--tokenizer-type GPTSentencePieceTokenizer with a tokenizer.model whose size it "
            "does not state, so GPT-2's 50,257 is an assumption"),
        "learned_positions": choice(True, "GPT-3-like model on Megatron-LM"),
        "tied_embeddings": choice(True, "Megatron's GPT ties the output head to the embedding"),
        "dropout": choice(True, "Megatron's GPT defaults"),
        "attention": choice("unfused", "not stated; Megatron-LM's default core attention"),
        "zero_stage": choice(0, "dp = 1: nothing to shard"),
        "framework": choice(
            "megatron-lm",
            "the Zero Bubble code is a fork of 2023-24 Megatron-LM (sail-sg/zero-bubble-"
            "pipeline-parallelism)"),
        "zb_runtime_transfers": choice(
            "stream-ordered for the zero-bubble schedules (ZB-H1, ZB-H2, ZB-1p, ZB-2p and the "
            "all-reduce-sync ablation; framework override pipeline_transfers); the preset's "
            "host-synchronized for 1F1B and 1F1B-I",
            "with --enable-zero-bubble the fork runs its own runtime (schedules.py "
            "get_forward_backward_func -> zb_schedules.py at 425b42e5), whose transfers are "
            "batch_isend_irecv handles waited on before use, with no torch.cuda.synchronize(); "
            "the baselines run Megatron's schedules, whose _communicate synchronizes the device "
            "after batched transfers (p2p_communication.py, batch_p2p_sync)"),
        "measured": choice(
            "/derived/iteration_s_derived",
            "the paper prints samples per GPU per second; with dp = 1 one iteration is m x b "
            "samples, so iteration_s = m b / (samples_per_gpu_per_s x GPUs)"),
        "family": choice("zerobubble", "one family: pure pipeline parallelism, 8 to 32 GPUs"),
        "memory": choice(
            "/measured/memory_gb",
            "the paper's peak memory in GB (10^9 B), read as the allocator's peak of the fullest "
            "GPU (torch.cuda.max_memory_allocated), which parasim's peak_memory_bytes models"),
    },
}

SOURCES = ["vtrain", "megatron2021-table1", "zerobubble-main"]

LICENSE_NOTE = (
    "Published measurements are facts, copied with their citation (see "
    "scenarios/validation/published/README.md); the scenarios are parasim's mapping of them.")


def value(source, key):
    return MAPPING[source][key]["value"]


def gpt_model(source, name, layers, hidden, heads, ffn, vocab, seq):
    """A GPT-style written-out model section (GeLU MLP, LayerNorm, biases)."""
    return {
        "name": name, "layers": layers, "hidden": hidden, "heads": heads, "ffn_hidden": ffn,
        "vocab": vocab, "seq_len": seq, "mlp": "gelu", "norm": "layernorm",
        "tied_embeddings": value(source, "tied_embeddings"),
        "dropout": value(source, "dropout"), "linear_bias": True,
        "learned_positions": value(source, "learned_positions"),
    }


def whole_gradient_bucket(model, gradient_bytes=2):
    """dp_bucket holding every gradient of the model: an upper bound on any stage's share.

    Parameters of a GPT layer with biases: attention 4h^2 + 4h, MLP 2hf + f + h, two LayerNorms
    4h; plus the embedding V h, the position table s h and the final LayerNorm 2h.
    """
    h, f = model["hidden"], model["ffn_hidden"]
    layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h
    params = model["layers"] * layer + model["vocab"] * h + model["seq_len"] * h + 2 * h
    return f"{math.ceil(params * gradient_bytes / 1e6)} MB"


def scenario(name, description, model, cluster, training, parallel):
    return {"name": name, "description": description, "model": model, "cluster": cluster,
            "training": training, "parallel": parallel, "optimizer": {"name": "adamw"}}


def uneven_reason(layers, pp):
    if layers % pp:
        return ("pp does not divide the layer count: needs uneven pipeline stages "
                "(parallel.stage_layers is not modelled yet)")
    return None


def convert_vtrain(case):
    src = "vtrain"
    m, p, hw = case["model"], case["parallel"], case["hardware"]
    n = hw["num_gpus"]
    family = "vtrain-single-node" if n <= 8 else "vtrain-multi-node"
    entry = {"id": case["id"], "family": family}
    measured = {"step_time_s": case["measured"]["iteration_ms"] / 1000.0,
                "from": value(src, "measured")}
    reason = uneven_reason(m["num_layers"], p["pp"])
    if reason:
        return dict(entry, measured=measured, not_expressible=reason, published=case)
    model = gpt_model(src, f"gpt-h{m['hidden_size']}-l{m['num_layers']}", m["num_layers"],
                      m["hidden_size"], m["num_attention_heads"], m["ffn_hidden_size"],
                      value(src, "vocab"), m["seq_length"])
    cluster = {"preset": value(src, "cluster_preset"), "gpus_per_node": min(8, n),
               "nodes": max(1, n // 8),
               "inter_node": {"bandwidth": value(src, "inter_node_bandwidth")}}
    training = {"global_batch": p["global_batch_size"], "micro_batch": p["micro_batch_size"],
                "precision": value(src, "precision"), "recompute": value(src, "recompute"),
                "attention": value(src, "attention"), "framework": value(src, "framework")}
    parallel = {"dp": p["dp"], "tp": p["tp"], "pp": p["pp"],
                "sequence_parallel": value(src, "sequence_parallel"),
                "schedule": value(src, "schedule"), "zero_stage": value(src, "zero_stage"),
                "dp_bucket": whole_gradient_bucket(model)}
    desc = (f"vTrain ground truth {case['id']}: Megatron-DeepSpeed GPT on {n} A100s "
            f"(tp {p['tp']} pp {p['pp']} dp {p['dp']}); mapping in docs/validation.md")
    return dict(entry, measured=measured,
                scenario=scenario(case["id"], desc, model, cluster, training, parallel),
                published=case)


def convert_megatron(case):
    src = "megatron2021-table1"
    m, p, hw = case["model"], case["parallel"], case["hardware"]
    entry = {"id": case["id"], "family": value(src, "family")}
    measured = {"step_time_s": case["derived"]["iteration_s_derived"],
                "from": value(src, "measured")}
    reason = uneven_reason(m["num_layers"], p["pp"])
    if reason:
        return dict(entry, measured=measured, not_expressible=reason, published=case)
    model = gpt_model(src, f"gpt-{m['params_billion']}b", m["num_layers"], m["hidden_size"],
                      m["num_attention_heads"], m["ffn_hidden_size"], m["vocab_size"],
                      m["seq_length"])
    cluster = {"preset": value(src, "cluster_preset"), "nodes": hw["num_gpus"] // 8}
    training = {"global_batch": p["global_batch_size"], "micro_batch": p["micro_batch_size"],
                "precision": value(src, "precision"), "recompute": value(src, "recompute"),
                "attention": value(src, "attention")}
    parallel = {"dp": p["dp"], "tp": p["tp"], "pp": p["pp"],
                "sequence_parallel": p["sequence_parallel"], "zero_stage": p["zero_stage"]}
    vps = p["virtual_pipeline_stages"]
    if vps > 1:
        parallel.update(schedule="interleaved-1f1b", chunks=vps)
    else:
        parallel["schedule"] = "1f1b"
    if p["ddp_impl"] == "local":
        training["framework"] = "megatron-lm-2021"
        parallel["dp_bucket"] = whole_gradient_bucket(model)
    elif p["ddp_impl"] == "torch":
        training["framework"] = {"preset": "megatron-lm-2021",
                                 "gradient_reduction": "overlapped"}
        parallel["dp_bucket"] = "25 MB"
    else:
        raise ValueError(f"{case['id']}: unknown ddp_impl {p['ddp_impl']!r}")
    desc = (f"Megatron-LM 2021 Table 1, {m['params_billion']}B on {hw['num_gpus']} A100s "
            f"(tp {p['tp']} pp {p['pp']} dp {p['dp']}); mapping in docs/validation.md")
    return dict(entry, measured=measured,
                scenario=scenario(case["id"], desc, model, cluster, training, parallel),
                published=case)


# Zero Bubble schedules: parasim's schedule, its optimizer post-validation (None: the
# schedule's default) and whether the fork's zero-bubble runtime runs it (its stream-ordered
# transfers, the mapping's "zb_runtime_transfers" row), or the reason it is not expressible.
ZB_SCHEDULES = {
    "1F1B": ("1f1b", None, False),
    "ZB-H1": ("zb-h1", None, True),
    "ZB-H2": ("zb-h2", None, True),
    "ZB-1p": ("zb-1p", True, True),
    "ZB-2p": ("zb-2p", True, True),
    "ZB-2p-allreduce-sync": ("zb-2p", False, True),
    "1F1B-I": ("interleaved-1f1b", None, False),  # a chunk per layer: zb_interleaved_layers
}
ZB_NOT_EXPRESSIBLE = {
    "ZB-V": "ZB-V (the V-shaped zero-bubble schedule) is not modelled",
}
# Interleaved 1F1B with every transformer layer its own chunk (the mapping's "schedule" row).
ZB_INTERLEAVED = "1F1B-I"


def zb_stage_layers(layers, pp):
    """First and last stage one layer fewer than the others, or None if that does not add up."""
    if (layers + 2) % pp:
        return None
    middle = (layers + 2) // pp
    return [middle - 1] + [middle] * (pp - 2) + [middle - 1]


def zb_interleaved_layers(layers, pp):
    """(chunks, stage_layers) for 1F1B-I: a chunk per layer once the layers are padded to a
    multiple of pp, the two padding layers taken from virtual stage 0 (the first stage's first
    chunk) and the last virtual stage (the last stage's last chunk), as the Zero Bubble fork's
    get_offset does (chunk_sizes[-1] and chunk_sizes[0] less one)."""
    padded = layers + 2
    if padded % pp:
        return None
    chunks = padded // pp
    counts = [1] * (pp * chunks)
    counts[0] = counts[-1] = 0
    return chunks, counts


def convert_zerobubble(case):
    src = "zerobubble-main"
    m, p, hw = case["model"], case["parallel"], case["hardware"]
    entry = {"id": case["id"], "family": value(src, "family"),
             "measured": {"step_time_s": case["derived"]["iteration_s_derived"],
                          "from": value(src, "measured")}}
    memory_gb = case["measured"].get("memory_gb")
    if memory_gb is not None:
        entry["measured"]["peak_memory_bytes"] = memory_gb * 1e9
        entry["measured"]["memory_from"] = value(src, "memory")
    sched = p["schedule"]
    if sched in ZB_NOT_EXPRESSIBLE:
        return dict(entry, not_expressible=ZB_NOT_EXPRESSIBLE[sched], published=case)
    if sched not in ZB_SCHEDULES:
        raise ValueError(f"{case['id']}: schedule {sched!r} is not in the mapping table")
    layers, pp = m["num_layers"], p["pp"]
    stage_layers = zb_stage_layers(layers, pp)
    if stage_layers is None:
        raise ValueError(f"{case['id']}: {layers} layers do not give the first and last of "
                         f"{pp} stages one layer fewer than the others")
    if not EMIT_STAGE_LAYERS:
        return dict(entry, not_expressible=(
            "uneven pipeline stages: the first and last stage hold one layer fewer than the "
            "others (EMIT_STAGE_LAYERS is off in scripts/validation/make_dev_set.py)"),
            published=case)
    n = hw["num_gpus"]
    model = gpt_model(src, f"gpt-{m['name'].lower()}", layers, m["hidden_size"],
                      m["num_attention_heads"], m["ffn_hidden_size"], value(src, "vocab"),
                      m["seq_length"])
    cluster = {"preset": value(src, "cluster_preset"), "nodes": max(1, n // 8)}
    training = {"global_batch": p["micro_batch_size"] * p["num_microbatches"],
                "micro_batch": p["micro_batch_size"], "precision": value(src, "precision"),
                "recompute": value(src, "recompute"), "attention": value(src, "attention"),
                "framework": value(src, "framework")}
    schedule, post_validation, zb_runtime = ZB_SCHEDULES[sched]
    if zb_runtime:
        training["framework"] = {"preset": value(src, "framework"),
                                 "pipeline_transfers": "stream-ordered"}
    chunks = None
    if sched == ZB_INTERLEAVED:
        chunks, stage_layers = zb_interleaved_layers(layers, pp)
    published_pv = p.get("optimizer_post_validation")
    if post_validation is not None and published_pv is not None and published_pv != post_validation:
        raise ValueError(f"{case['id']}: optimizer_post_validation {published_pv!r} contradicts "
                         f"the mapping of {sched}")
    parallel = {"dp": 1, "tp": 1, "pp": pp, "schedule": schedule,
                "zero_stage": value(src, "zero_stage"), "stage_layers": stage_layers}
    if chunks is not None:
        parallel["chunks"] = chunks
    if post_validation is not None:
        parallel["optimizer_post_validation"] = post_validation
    desc = (f"Zero Bubble Table 4, {m['name']} {sched} on {n} A100s, {p['num_microbatches']} "
            f"micro-batches of {p['micro_batch_size']}; mapping in docs/validation.md")
    return dict(entry,
                scenario=scenario(case["id"], desc, model, cluster, training, parallel),
                published=case)


CONVERTERS = {"vtrain": convert_vtrain, "megatron2021-table1": convert_megatron,
              "zerobubble-main": convert_zerobubble}


def mapping_text(source):
    def text(v):
        return v if isinstance(v, str) else json.dumps(v)
    rows = [f"{key}: {text(row['value'])} ({row['reason']})"
            for key, row in MAPPING[source].items() if key != "published"]
    return "; ".join(rows) + "."


def convert(source):
    published = json.loads((PUBLISHED / MAPPING[source]["published"]).read_text("utf-8"))
    cases = [CONVERTERS[source](case) for case in published["cases"]]
    citation = published["source"]
    if "paper" in published:
        citation += "; paper " + published["paper"]
    doc = {"parasim_validation": 1, "source": citation, "license_note": LICENSE_NOTE,
           "mapping": mapping_text(source)}
    if "profile" in MAPPING[source]:
        doc["profile"] = MAPPING[source]["profile"]["value"]
    doc["cases"] = cases
    return doc


def dump(doc):
    """The header one key a line, then one case a line (diffs stay per case)."""
    lines = ["{"]
    for key, val in doc.items():
        if key != "cases":
            lines.append(f"  {json.dumps(key)}: {json.dumps(val, ensure_ascii=False)},")
    lines.append('  "cases": [')
    lines.append(",\n".join("    " + json.dumps(c, ensure_ascii=False) for c in doc["cases"]))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the checked-in files instead of writing them")
    args = parser.parse_args()
    stale = []
    for source in SOURCES:
        text = dump(convert(source))
        path = OUTPUT / f"{source}.json"
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, "utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date with scripts/validation/make_dev_set.py (rerun it and commit the "
              "result): " + ", ".join(stale), file=sys.stderr)
        return 1
    if args.check:
        print("scenarios/validation/*.json match scripts/validation/make_dev_set.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
