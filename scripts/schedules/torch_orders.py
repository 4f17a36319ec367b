# Generates PyTorch's per-rank pipeline orders in parasim's notation (F/B/W, micro-batch, local chunk)
# for tests/strategies/v_schedules_test.cpp. torch 2.15.0 (git d0f2af8b), CPU import only.
import types
from torch.distributed.pipelining import schedules as S
def fake(**kw): return types.SimpleNamespace(**kw)
def local_chunk(stage, r, P, v_shape):
    if v_shape: return 0 if stage == r else 1
    return stage // P
def tokens(ops, r, P, v_shape):
    out = []
    def one(a):
        t = a.computation_type.value
        c = local_chunk(a.stage_index, r, P, v_shape)
        mb = a.microbatch_index
        if t == "F": out.append(f"F{mb}.{c}")
        elif t == "I": out.append(f"B{mb}.{c}")
        elif t == "W": out.append(f"W{mb}.{c}")
        elif t == "B": out.append(f"B{mb}.{c}"); out.append(f"W{mb}.{c}")
        else: raise Exception(t)
    for a in ops:
        if a is None: continue
        if a.sub_actions:
            for s in a.sub_actions: one(s)
        else: one(a)
    return " ".join(out)
def emit(name, P, n, fn, v_shape):
    for r in range(P):
        print(f'{name} P{P} m{n} r{r}: {tokens(fn(r), r, P, v_shape)}')
for n in (8, 5):
    P = 4
    emit("zb-v", P, n, lambda r: S.ScheduleZBVZeroBubble._calculate_single_rank_operations(fake(pp_group_size=P,num_stages=2*P,_n_microbatches=n),r), True)
for n in (8, 9):
    P = 4
    emit("dualpipev", P, n, lambda r: S.ScheduleDualPipeV._calculate_single_rank_operations(fake(pp_group_size=P,_n_microbatches=n),r), True)
for (P, v, n) in [(4, 2, 8), (4, 2, 4), (4, 3, 10)]:
    nr = max(1, n // P); mpr = n // nr
    emit(f"interleaved-zb v{v}", P, n, lambda r: S.ScheduleInterleavedZeroBubble._calculate_single_rank_operations(fake(pp_group_size=P,n_local_stages=v,microbatches_per_round=mpr,_n_microbatches=n),r), False)
