"""The click options the commands share: the MODEL options (a preset, then the features' flags and the bounds),
--plugin, and the trace outputs (explorer/reports/artifacts.py)."""
from __future__ import annotations

import json
import os
import warnings

import click

import invariants as invariants_pkg
from invariants.plugins import Plugins, env_plugins
from model import BOUNDS
from model.moved import MovedModuleWarning
from explorer.catalog import VARIANTS  # every design's name, KRaft's included

from explorer.catalog import PRESETS, features as catalog, load_plugins
from explorer.errors import JbodcheckFailure

from .bugs import bug_option
from .fixes import fix_option
from .release import KAFKA_OPTION, kafka_option
from .exits import BadInput
from .sections import section


def _per_partition(ctx, param, value):
    if value is None:
        return None
    try:
        values = [int(v) for v in value.split(",")]
    except ValueError:
        flag = "--" + param.name.replace("_", "-")
        raise BadInput(f"{flag} takes whole numbers separated by commas, not {value!r}") from None
    return values[0] if len(values) == 1 else values


def _feature_options(ctx, param, pairs):
    """--option NAME=VALUE (repeatable): an option of a feature added by a plugin; VALUE is JSON, else text."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--option takes NAME=VALUE, not {pair!r}")
        if name.strip() == KAFKA_OPTION and not text.strip().startswith('"'):
            out[KAFKA_OPTION] = text.strip()      # a release is text: 3.90 is not the JSON number 3.9
            continue
        try:
            out[name.strip()] = json.loads(text)
        except ValueError:
            out[name.strip()] = text
    return out


def _flag_option(flag):
    """The click option of a feature's Flag (model/spec/feature.py)."""
    kinds = {
        "switch": {},
        "int": {"type": int, "metavar": flag.metavar or "N"},
        "per-partition": {"metavar": flag.metavar or "N[,N...]", "callback": _per_partition},
        "choice": {"type": click.Choice(flag.choices)},
        "text": {"metavar": flag.metavar or "TEXT"},
    }
    return click.option(flag.decl, flag.field, default=None, help=flag.help, **kinds[flag.type])


# The sections of the MODEL options in --help (explorer/cli/sections.py).
MODEL, CLUSTER, FEATURES, BOUNDS_SECTION, KRAFT, PLUGINS = (
    "Model", "Cluster", "Features", "Bounds", "KRaft mode", "Plugins and feature options")
MODEL_SECTIONS = (MODEL, CLUSTER, BOUNDS_SECTION, FEATURES, KRAFT, PLUGINS)
SHAPE = ("brokers", "dirs", "partitions", "rf")


def _flag_section(flag) -> str:
    if flag.field in SHAPE:
        return CLUSTER
    return BOUNDS_SECTION if flag.field.startswith("max_") or flag.field == "dir_capacity" else FEATURES


def builtin_option_names() -> list[str]:
    """The options the built-in features take (``--option NAME=VALUE``; model/spec/feature.py Option)."""
    return [option.name for feature in catalog() for option in feature.options]


def model_options(f):
    """MODEL options: a preset fills them, explicit flags override the preset. The features bring their flags
    (model/spec/feature.py Flag); the bounds are the model's."""
    option = click.option(
        "--option", "options", multiple=True, metavar="NAME=VALUE", callback=_feature_options,
        help="Set a feature's option (repeatable; VALUE in JSON, else text, e.g. 2, true or move). The built-in "
             f"ones (KRaft mode): {', '.join(builtin_option_names())}; docs/reference/cli.md lists them with "
             "their defaults. A plugin's feature brings its own.")
    f = section(PLUGINS, option)(f)
    f = section(KRAFT, kafka_option, bug_option, fix_option)(f)
    flags = [flag for feature in catalog() for flag in feature.flags]
    bounds = [click.option(f"--{name.replace('_', '-')}", name, type=int, default=None, metavar="N",
                           help=f"Bound: {BOUNDS[name]}.") for name in BOUNDS]
    for title in (FEATURES, BOUNDS_SECTION, CLUSTER):
        extra = bounds if title == BOUNDS_SECTION else []
        f = section(title, *extra, *(_flag_option(flag) for flag in flags if _flag_section(flag) == title))(f)
    f = section(MODEL,
                click.option("--preset", default=None, metavar="NAME",
                             help=f"Named configuration: {', '.join(PRESETS)}."),
                click.option("--variant", default=None, metavar="NAME",
                             help=f"Protocol variant: {', '.join(VARIANTS)} (legacy: the old name of "
                                  f"kip112-no-isnew-check)."))(f)
    return f


MODEL_PARAMS = ("variant", *(flag.field for feature in catalog() for flag in feature.flags), *BOUNDS, "options", "bug_ids",
                "fix_names", "kafka_release")


def model_params(kwargs: dict) -> dict:
    """Take the MODEL options out of a command's keyword arguments, keeping those given explicitly."""
    return {n: v for n in MODEL_PARAMS if (v := kwargs.pop(n, None)) is not None}


_PLUGINS, _PLUGIN_NAMES = "jbodcheck.plugins", "jbodcheck.plugin_names"


def _load_plugins(ctx, param, names) -> None:
    """--plugin MODULE (repeatable) and JBODCHECK_PLUGINS: import users' invariant and feature modules
    (docs/extending.md); the command's model gets what they declare."""
    blank = next((n for n in names or () if not n.strip()), None)
    if blank is not None:
        raise BadInput(f"--plugin takes a module name or a .py file, not {blank!r}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MovedModuleWarning)
            plugins = load_plugins(names or (), env=True)
        for w in caught:      # a plugin of 0.3.x that imports a moved module: one line each, as every warning
            if issubclass(w.category, MovedModuleWarning):
                click.echo(f"jbodcheck: warning: {os.path.basename(w.filename)}:{w.lineno}: {w.message}", err=True)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    except invariants_pkg.PluginError as e:
        raise BadInput(str(e)) from None
    except invariants_pkg.plugins.PluginAbort as e:    # sys.exit() or KeyboardInterrupt in a plugin's import
        raise JbodcheckFailure(str(e)) from None
    ctx.meta[_PLUGINS] = plugins
    # load_plugins returns one module per name, JBODCHECK_PLUGINS' first, in order.
    wanted = env_plugins() + [n.strip() for n in names or () if n and n.strip()]
    given: dict[str, str] = {}
    for name, module in zip(wanted, plugins.modules):
        given.setdefault(module.__name__, name)
    ctx.meta[_PLUGIN_NAMES] = given


def plugin_option(f):
    plugin = click.option("--plugin", "plugins", multiple=True, metavar="MODULE", expose_value=False,
                          callback=_load_plugins,
                          help="Import MODULE (a module name or a .py file) for its @invariants.invariant "
                               "declarations and FEATURES (repeatable; also JBODCHECK_PLUGINS=mod1,mod2).")
    return section(PLUGINS, plugin)(f)


def plugins() -> Plugins:
    """What --plugin and JBODCHECK_PLUGINS loaded for this command (invariants/plugins.py)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get(_PLUGINS) if ctx is not None else None) or Plugins()


def plugin_name(module: str) -> str:
    """How the user named the plugin that defines ``module`` (--plugin or JBODCHECK_PLUGINS), for a hint."""
    ctx = click.get_current_context(silent=True)
    given = (ctx.meta.get(_PLUGIN_NAMES) if ctx is not None else None) or {}
    return given.get(module, module)


def json_report_option(f):
    return click.option("--json", "json_path", default=None, metavar="PATH|-",
                        help="Write the JSON report to PATH or stdout.")(f)


def quiet_option(f):
    return click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")(f)


def html_option(f):
    return click.option("--html", "html_path", default=None, metavar="PATH",
                        help="Write the run as a self-contained HTML page: summary, coverage, each counterexample "
                             "step by step with the cluster drawn.")(f)


def itf_option(f):
    return click.option("--itf", "itf_path", default=None, metavar="PATH",
                        help="Write the counterexample in the Informal Trace Format of Apalache and Quint (several: "
                             "the n-th to PATH-n, e.g. t-2.itf.json).")(f)


def save_scenario_option(f):
    return click.option("--save-scenario", "save_scenario", default=None, metavar="PATH",
                        help="Write the counterexample as a scenario file for `jbodcheck replay` (several: the n-th to "
                             "PATH-n, e.g. s-2.json).")(f)


def dot_option(f):
    return click.option("--dot", "dot_path", default=None, metavar="PATH",
                        help="Write the explored state graph in Graphviz DOT, the counterexample highlighted "
                             "(needs --max-states N, N <= 2000).")(f)
