#!/usr/bin/env python3
"""Extract the configuration keys a trainer's own source accepts, by reading it with ast.

parasim export writes only keys these lists hold (tests/planner checks every export against
them). Each list is extracted statically from the released package: nothing is imported, so
neither torch nor a GPU is needed. Megatron-LM's sources use Python 3.12 syntax: run this with
Python >= 3.12.

Get the sources (any folder; nothing of them goes into the repository):
  pip download megatron-core==0.19.2 --no-deps --python-version 3.12 --only-binary=:all: -d DIR
  pip download deepspeed==0.19.8 --no-deps --no-binary=:all: -d DIR     (an sdist)
  pip download torchtitan==0.3.0 --no-deps -d DIR;  pip download torchtitan==0.2.2 --no-deps -d DIR
  git clone facebookresearch/optimizers (commit f60660661194de26d3ee78bae6d15820ff8e583d) and
  IST-DASLab/ISTA-DASLab-Optimizers (4c98e6e7d8a58534efc4241220364de5e82f552c)
unpack the wheels and the sdist, then
  python3 scripts/export/extract_keys.py --megatron M --deepspeed D --torchtitan03 T3 \
      --torchtitan02 T2 --shampoo S --dash A --out scripts/export/keys
where each argument is the folder holding the package's top-level module (megatron/,
deepspeed/, torchtitan/, distributed_shampoo/, ista_daslab_optimizers/).
"""
import argparse
import ast
import os
import sys

HEADER = "# {what}: every key its source accepts, one per line.\n# Extracted by scripts/export/extract_keys.py (static ast reading) from {files}.\n"


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), filename=path)


class Package:
    """Finds classes across a package's modules, following `from X import Y`."""

    def __init__(self, root):
        self.root = root
        self.trees = {}

    def module_file(self, dotted):
        base = os.path.join(self.root, *dotted.split("."))
        for cand in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.exists(cand):
                return cand
        return None

    def tree(self, dotted):
        if dotted not in self.trees:
            f = self.module_file(dotted)
            self.trees[dotted] = parse(f) if f else None
        return self.trees[dotted]

    def resolve(self, dotted, name, depth=0):
        """(module, ClassDef) for `name` as seen from module `dotted`."""
        tree = self.tree(dotted)
        if tree is None or depth > 20:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return dotted, node
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name or alias.name == "*":
                        mod = node.module or ""
                        if node.level:
                            parts = dotted.split(".")
                            is_pkg = self.module_file(dotted).endswith("__init__.py")
                            keep = len(parts) - node.level + (1 if is_pkg else 0)
                            mod = ".".join(parts[:keep] + ([mod] if mod else []))
                        found = self.resolve(mod, alias.name if alias.name != "*" else name,
                                             depth + 1)
                        if found:
                            return found
        return None


def call_name(node):
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def dataclass_fields(pkg, module, cls, seen=None):
    """[(name, annotation, value)] of a class and its bases, bases first."""
    seen = seen or set()
    out = []
    for base in cls.bases:
        bname = base.id if isinstance(base, ast.Name) else None
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            found = pkg.resolve(module, base.value.id)
            if found:
                inner = [n for n in found[1].body if isinstance(n, ast.ClassDef) and n.name == base.attr]
                if inner and (found[0], inner[0].name, id(inner[0])) not in seen:
                    seen.add((found[0], inner[0].name, id(inner[0])))
                    out += dataclass_fields(pkg, found[0], inner[0], seen)
            continue
        if bname:
            found = pkg.resolve(module, bname)
            if found and (found[0], bname) not in seen:
                seen.add((found[0], bname))
                out += dataclass_fields(pkg, found[0], found[1], seen)
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if "ClassVar" in ast.unparse(node.annotation):
                continue
            out.append((node.target.id, node.annotation, node.value))
    return out


def field_keyword(value, key):
    if isinstance(value, ast.Call) and call_name(value) in ("field", "Field"):
        for kw in value.keywords:
            if kw.arg == key:
                return kw.value
    return None


def init_false(value):
    v = field_keyword(value, "init")
    return isinstance(v, ast.Constant) and v.value is False


def default_of(value):
    if isinstance(value, ast.Call) and call_name(value) in ("field", "Field"):
        d = field_keyword(value, "default")
        if d is None and value.args and call_name(value) == "Field":
            d = value.args[0]
        return d
    return value


# ---------------------------------------------------------------- Megatron-LM
def megatron_flags(root):
    pkg = Package(root)
    module = "megatron.training.arguments"
    tree = pkg.tree(module)
    flags = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                    flags.add(a.value)
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        local_lists = {}
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.List):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        local_lists[t.id] = n.value
        for n in ast.walk(fn):
            if not (isinstance(n, ast.Call) and call_name(n) == "ArgumentGroupFactory"):
                continue
            cls_name = n.args[0].id
            exclude = set()
            for kw in n.keywords:
                if kw.arg == "exclude":
                    lst = kw.value if isinstance(kw.value, ast.List) else local_lists[kw.value.id]
                    exclude = {e.value for e in lst.elts}
            found = pkg.resolve(module, cls_name)
            if not found:
                sys.exit(f"megatron: cannot find class {cls_name}")
            for name, ann, value in dataclass_fields(pkg, found[0], found[1]):
                if name in exclude or init_false(value):
                    continue
                meta = field_keyword(value, "metadata")
                names = None
                if isinstance(meta, ast.Dict):
                    for k, v in zip(meta.keys, meta.values):
                        if isinstance(k, ast.Constant) and k.value == "argparse_meta" and isinstance(v, ast.Dict):
                            for k2, v2 in zip(v.keys, v.values):
                                if isinstance(k2, ast.Constant) and k2.value == "arg_names":
                                    names = [e.value for e in v2.elts]
                ann_text = ast.unparse(ann).replace(" ", "")
                is_bool = ann_text in ("bool", "Optional[bool]", "bool|None", "None|bool")
                default = default_of(value)
                store_true = isinstance(default, ast.Constant) and default.value is False
                dashed = name.replace("_", "-")
                if names is None:
                    names = [f"--{dashed}"] if not is_bool or store_true else [f"--no-{dashed}", f"--disable-{dashed}"]
                flags.update(names)
    return sorted(flags)


# ---------------------------------------------------------------- DeepSpeed
def string_constants(tree):
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id.isupper() and not t.id.endswith("_DEFAULT"):
                    if node.value.value.isidentifier():
                        out.add(node.value.value)
    return out


def pydantic_keys(pkg, module, name):
    found = pkg.resolve(module, name)
    if not found:
        sys.exit(f"deepspeed: cannot find {name}")
    keys = set()
    for fname, _, value in dataclass_fields(pkg, found[0], found[1]):
        keys.add(fname)
        alias = field_keyword(value, "alias")
        if isinstance(alias, ast.Constant):
            keys.add(alias.value)
    return keys


def deepspeed_keys(root):
    pkg = Package(root)
    rt = "deepspeed.runtime"
    keys = {k for k in string_constants(pkg.tree(rt + ".constants"))}
    sections = {
        "zero_optimization": (rt + ".zero.config", "DeepSpeedZeroConfig"),
        "bf16": (rt + ".precision_config", "DeepSpeedBF16Config"),
        "fp16": (rt + ".precision_config", "DeepSpeedFP16Config"),
        "tensor_parallel": (rt + ".tensor_parallel.config", "TPTrainingConfig"),
        # zero/offload_config.py: the offload sections' own models
        "zero_optimization.offload_optimizer": (rt + ".zero.offload_config",
                                                "DeepSpeedZeroOffloadOptimizerConfig"),
        "zero_optimization.offload_param": (rt + ".zero.offload_config",
                                            "DeepSpeedZeroOffloadParamConfig"),
    }
    for section, (mod, cls) in sections.items():
        keys.add(section)
        keys |= {f"{section}.{k}" for k in pydantic_keys(pkg, mod, cls)}
    # activation_checkpointing/config.py: ACT_CHKPT names the section, the other constants its keys
    act = string_constants(pkg.tree(rt + ".activation_checkpointing.config"))
    act.discard("activation_checkpointing")
    keys.add("activation_checkpointing")
    keys |= {f"activation_checkpointing.{k}" for k in act}
    keys |= {"optimizer.type", "optimizer.params", "data_types.grad_accum_dtype"}
    # the pipeline section's keys: get_pipeline_config's defaults (runtime/config.py)
    for node in ast.walk(pkg.tree(rt + ".config")):
        if isinstance(node, ast.FunctionDef) and node.name == "get_pipeline_config":
            for d in ast.walk(node):
                if isinstance(d, ast.Dict):
                    keys |= {f"pipeline.{k.value}" for k in d.keys if isinstance(k, ast.Constant)}
    return sorted(keys)


# ---------------------------------------------------------------- torchtitan
def torchtitan03_keys(root):
    pkg = Package(root)
    found = pkg.resolve("torchtitan.trainer", "Trainer")
    config = [n for n in found[1].body if isinstance(n, ast.ClassDef) and n.name == "Config"][0]
    keys = set()
    for section, ann, _ in dataclass_fields(pkg, found[0], config):
        text = ast.unparse(ann)
        target = None
        if isinstance(ann, ast.Name):
            target = pkg.resolve(found[0], ann.id)
        elif isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name):
            outer = pkg.resolve(found[0], ann.value.id)
            if outer:
                inner = [n for n in outer[1].body if isinstance(n, ast.ClassDef) and n.name == ann.attr]
                target = (outer[0], inner[0]) if inner else None
        if target is None:
            keys.add(section)
            continue
        for field, _, _ in dataclass_fields(pkg, target[0], target[1]):
            keys.add(f"{section}.{field}")
    # ConfigManager._load_config's own arguments (--module, --config), compared as strings
    manager = pkg.tree("torchtitan.config.manager")
    for node in ast.walk(manager):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and
                len(node.comparators) == 1 and isinstance(node.comparators[0], ast.Constant) and
                isinstance(node.comparators[0].value, str) and
                node.comparators[0].value in ("--module", "--config")):
            keys.add(node.comparators[0].value[2:])
    # the activation checkpoint: a tyro subcommand per policy
    tree = pkg.tree("torchtitan.distributed.activation_checkpoint")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "subcommand":
            keys.add("activation-checkpoint:" + node.args[0].value)
    return sorted(keys)


def torchtitan02_keys(root):
    """section.field, and for a field that is a dataclass itself (quantize.linear.float8, a
    nested TOML table) its fields below it too: quantize.linear, quantize.linear.float8,
    quantize.linear.float8.recipe_name."""
    pkg = Package(root)
    module = "torchtitan.config.job_config"
    found = pkg.resolve(module, "JobConfig")
    keys = set()

    def walk(prefix, mod, cls, depth):
        for field, ann, _ in dataclass_fields(pkg, mod, cls):
            key = f"{prefix}.{field}" if prefix else field
            target = pkg.resolve(mod, ast.unparse(ann)) if isinstance(ann, ast.Name) else None
            if prefix or target is None:  # a section alone is no key; a plain field is
                keys.add(key)
            if target is not None and depth < 4:
                walk(key, target[0], target[1], depth + 1)

    walk("", module, found[1], 0)
    return sorted(keys)


# ---------------------------------------------------------------- Shampoo, DASH
def init_params(cls):
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            args = node.args.args[1:] + node.args.kwonlyargs
            return [a.arg for a in args]
    return []


def classes_keys(pkg, module_names, constructors):
    keys = set()
    for module in module_names:
        tree = pkg.tree(module)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            keys.add(node.name)
            if node.name in constructors:
                keys |= {f"{node.name}.{p}" for p in init_params(node)}
                continue
            for field, _, _ in dataclass_fields(pkg, module, node):
                keys.add(f"{node.name}.{field}")
            for item in node.body:  # enum members
                if isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name) and item.targets[0].id.isupper():
                    keys.add(f"{node.name}.{item.targets[0].id}")
    return sorted(keys)


def shampoo_keys(root):
    pkg = Package(root)
    return classes_keys(pkg, ["distributed_shampoo.distributed_shampoo", "distributed_shampoo.shampoo_types",
                              "distributed_shampoo.preconditioner.matrix_functions_types"],
                        {"DistributedShampoo"})


def dash_keys(root):
    pkg = Package(root)
    d = "ista_daslab_optimizers.dash"
    mods = [d + ".dash_config", d + ".dash_gpu", d + ".dash_layerwise"]
    mods += [f"{d}.types.{m}" for m in ("inv_root_method_type", "matrix_scaling_type", "grafting_type",
                                        "algo_one_dim_type", "evd_heuristic_type")]
    return classes_keys(pkg, mods, {"DashGpu", "DashLayerwise"})


def write(out_dir, name, what, files, keys):
    path = os.path.join(out_dir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER.format(what=what, files=files))
        f.writelines(k + "\n" for k in keys)
    print(f"{path}: {len(keys)} keys")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for a in ("megatron", "deepspeed", "torchtitan03", "torchtitan02", "shampoo", "dash"):
        ap.add_argument("--" + a)
    ap.add_argument("--out", required=True)
    o = ap.parse_args()
    if o.megatron:
        write(o.out, "megatron-core-0.19.2.txt", "megatron-core 0.19.2 command-line flags",
              "megatron/training/arguments.py (add_argument calls and ArgumentGroupFactory dataclasses, "
              "flag names as megatron/training/argument_utils.py makes them)", megatron_flags(o.megatron))
    if o.deepspeed:
        write(o.out, "deepspeed-0.19.8.txt", "DeepSpeed 0.19.8 ds_config keys (dotted paths)",
              "deepspeed/runtime/constants.py, zero/config.py, zero/offload_config.py, precision_config.py, tensor_parallel/config.py, "
              "activation_checkpointing/config.py, config.py", deepspeed_keys(o.deepspeed))
    if o.torchtitan03:
        write(o.out, "torchtitan-0.3.0.txt", "torchtitan 0.3.0 ConfigManager arguments (module, config), overrides "
              "(section.field) and activation-checkpoint subcommands", "torchtitan/config/manager.py, "
              "torchtitan/trainer.py Trainer.Config, torchtitan/config/configs.py "
              "and the component Config classes, torchtitan/distributed/activation_checkpoint.py",
              torchtitan03_keys(o.torchtitan03))
    if o.torchtitan02:
        write(o.out, "torchtitan-0.2.2.txt", "torchtitan 0.2.2 TOML job config keys (section.field)",
              "torchtitan/config/job_config.py", torchtitan02_keys(o.torchtitan02))
    if o.shampoo:
        write(o.out, "distributed-shampoo-f60660661194.txt", "Distributed Shampoo (facebookresearch/optimizers "
              "f60660661194) classes, constructor arguments and config fields",
              "distributed_shampoo/distributed_shampoo.py, shampoo_types.py, preconditioner/matrix_functions_types.py",
              shampoo_keys(o.shampoo))
    if o.dash:
        write(o.out, "dash-4c98e6e7d8a5.txt", "DASH (IST-DASLab/ISTA-DASLab-Optimizers 4c98e6e7d8a5) classes, "
              "constructor arguments, DashConfig fields and enum members",
              "ista_daslab_optimizers/dash/dash_config.py, dash_gpu.py, dash_layerwise.py, types/*.py", dash_keys(o.dash))


if __name__ == "__main__":
    main()
