# parasim export of scenario "dash-llama-953m" for DASH (IST-DASLab/ISTA-DASLab-Optimizers 4c98e6e7d8a5)
# note: written for DASH (IST-DASLab/ISTA-DASLab-Optimizers 4c98e6e7d8a5): every key is one that version's own source accepts
# note: the step was simulated with the framework megatron-lm (Megatron-LM 23.04 .. core_v0.5.0, --transformer-impl local); the optimizer's constructor does not depend on it
# note: the scenario has no learning rate or weight decay: DASH's training script defaults are written (src/config/config.py: --lr 1e-3, --weight_decay 0.1); set them

import torch
from ista_daslab_optimizers import (
    DashConfig, DashGpu, DashGraftingType, DashInverseRootMethodType, DashLayerwise,
    DashMatrixScalingType,
)

torch.backends.cuda.matmul.allow_tf32 = True

optimizer = DashGpu(
    param_groups=model.parameters(),
    lr=0.001,
    weight_decay=0.1,
    config=DashConfig(
        block_size=1024,
        inv_root_freq=1,
        inv_root_method=DashInverseRootMethodType.CN,
        newton_steps=10,
        matrix_scaling_type=DashMatrixScalingType.FRO,
        matmul_dtype=torch.float16,
        grafting_type=DashGraftingType.ADAM,
    ),
)
