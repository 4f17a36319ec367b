"""Plan Llama 2 70B on 64 H100s for Megatron-LM: print the five best layouts, write the
winner's arguments (python examples/plan_llama2_70b.py [OUT])."""
import pathlib
import sys

import parasim

root = pathlib.Path(__file__).resolve().parent.parent
result = parasim.plan(root / "scenarios" / "llama2-70b-64gpu.json", for_trainer="megatron")
print(result.top(5).to_string(index=False))
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "llama2-70b-megatron.args")
out.write_text(result.winner.export(to="megatron"))
print(f"the winner's Megatron-LM arguments: {out}")
