#pragma once
// parasim::exporter DeepSpeed — a scenario as DeepSpeed 0.19.8's ds_config.json
// (deepspeed/runtime/config.py and constants.py; zero_optimization: runtime/zero/config.py;
// bf16/fp16: runtime/precision_config.py; tensor_parallel: runtime/tensor_parallel/config.py;
// activation_checkpointing: runtime/activation_checkpointing/config.py). DeepSpeed's batch
// identity holds: train_batch_size = train_micro_batch_size_per_gpu x
// gradient_accumulation_steps x dp (config.py _batch_assertion). What DeepSpeed takes from code
// — the model, the pipeline degree (PipelineModule(num_stages=pp)), activation checkpointing of
// each layer — is said in notes on standard error.
//
// Refused: context parallelism (DeepSpeed's sequence_parallel_size is Ulysses, not ring
// attention), Megatron sequence parallelism, schedules other than 1F1B (DeepSpeed's pipeline
// engine runs its TrainSchedule), ZeRO-2/3 with pipelining (runtime/pipe/engine.py asserts it),
// selective recompute, Shampoo/DASH, BOOST/TSP placements.

#include "planner/export/export_context.hpp"
#include "planner/export/rendered.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

Rendered write_deepspeed(const strat::Scenario& s, const ExportOptions& o, ExportContext& c);

}  // namespace parasim::exporter
