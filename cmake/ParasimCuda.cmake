# Placeholder until the CUDA detection lands: CUDA off.
set(PARASIM_HAVE_CUDA OFF)
