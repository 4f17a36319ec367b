#pragma once
// parasim::exporter trainer defaults — what a trainer does where a scenario does not say, so that
// `parasim plan --for TRAINER` simulates the run that trainer launches (planner/trainer_filter.hpp)
// and the plan it writes exports without approximation:
//
//   framework        the preset that models the trainer's host loop (strategies/framework/):
//                    megatron-lm for megatron, deepspeed for deepspeed, torchtitan for
//                    torchtitan; a scenario's framework is kept when it is a preset of the same
//                    trainer (megatron-lm-2021; megatron-deepspeed, DeepSpeed's engine).
//   grad_precision   the precision gradients are accumulated and reduced in (FP8 training's
//                    are bf16's: its GEMMs return bf16, and Megatron-LM keeps --bf16):
//                    megatron-core 0.19.2: fp32 with --bf16 (validate_args sets
//                      accumulate_allreduce_grads_in_fp32 for bf16, arguments.py), the training
//                      precision with --fp16;
//                    DeepSpeed 0.19.8: the training precision (engine.py get_data_types:
//                      grad_accum_dtype defaults to the model dtype, L1806-1807);
//                    torchtitan 0.3.0: fp32 (mixed_precision_reduce "float32", the only value its
//                      config accepts).
// A scenario that sets `training.grad_precision` or a framework of the trainer's keeps it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/export/export_types.hpp"

namespace parasim::exporter {

struct TrainerDefaults {
  std::string framework_preset;               // "megatron-lm"
  std::vector<std::string> framework_family;  // the presets that model this trainer's code
  bool fp32_gradients_with_bf16 = false;      // else the training precision
  bool fp32_gradients_with_fp16 = false;
};

// Megatron, DeepSpeed and torchtitan; std::invalid_argument for the shampoo target (an optimizer
// library, not a trainer).
const TrainerDefaults& trainer_defaults(Target trainer);

// The scenario document (a scenario's JSON object) with `trainer`'s defaults where it does not
// choose; `changes` gets one line per default applied ("training.framework: megatron-lm (...)").
nlohmann::json with_trainer_defaults(const nlohmann::json& document, Target trainer,
                                     std::vector<std::string>* changes);

}  // namespace parasim::exporter
