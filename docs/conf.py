"""Sphinx configuration of isbetter's documentation site.

The choice, stated: **Sphinx** with **numpydoc** (the docstrings already follow it) and
the **PyData theme**, as PyMC and ArviZ; **myst-parser** for the Markdown pages and
**myst-nb** for the notebooks of ``notebooks/``, rendered as tutorials. Everything
installs from PyPI: ``pip install -e ".[docs]"``.

Build (warnings are errors; a broken cross-reference or a missing docstring fails)::

    sphinx-build -W --keep-going -n -b html docs docs/_build/html

The notebooks are executed with their quick settings (``ISBETTER_NOTEBOOK_QUICK=1``, as
``tests/test_notebooks.py`` runs them) through jupyter-cache: each is executed once and
then read from the cache until its code changes (or isbetter's version does: the outputs
of a cached notebook may lag behind changes of the package between versions; the notebook
tests execute them afresh). The cache lives in ``$ISBETTER_DOCS_CACHE/<version>`` (default
``docs/_build/.jupyter_cache``); CI keeps it, and
Sphinx's doctrees, outside the clone so that a docs build re-executes nothing that did
not change. ``ISBETTER_DOCS_EXECUTE=off`` renders the notebooks without executing them.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

import isbetter  # noqa: E402

# ------------------------------------------------------------------------------ project
project = "isbetter"
author = "isbetter developers"
copyright = "isbetter developers"  # noqa: A001
release = isbetter.__version__  # the one version: src/isbetter/__init__.py
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",  # brings myst-parser: Markdown pages and notebooks
]

exclude_patterns = ["_build", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# ------------------------------------------------------------------------------ cross-references
nitpicky = True
# No network in CI (PyPI only), so no intersphinx: names of other libraries and the
# docstrings' plain-language types ("array-like", "optional") stay unlinked; every
# reference to isbetter itself must resolve.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(numpy|np|pandas|pd|scipy|matplotlib|mpl|arviz|az|pymc|pytensor|nutpie|numba|"
        r"networkx|nx|dask|distributed|sklearn|concurrent|os|pathlib|collections|typing|"
        r"typing_extensions|datetime|io|json|enum|types|builtins|abc|collections\.abc|"
        r"filelock|tqdm|seaborn)(\..*)?",
    ),
    (
        r"py:.*",
        r"(array-like|array_like|optional|default|sequence|mapping|iterable|callable|"
        r"path-like|file-like|scalar|dict-like|list-like|"
        r"int|float|str|bool|bytes|dict|list|tuple|set|frozenset|None|object|type|"
        r"Path|DataFrame|Series|Axes|Figure|Generator|ndarray|Sequence|Mapping|Iterable|"
        r"Iterator|Callable|Any|Literal|Self|Executor|Future|PathLike|Client|"
        r"InferenceData|Dataset|Model|RandomState|SeedSequence|BitGenerator|Number|"
        r"ArrayLike|NDArray|Hashable|Collection|Protocol|Enum|TypeAlias|ClassVar|"
        r"TextIO|IO|Counter|OrderedDict|defaultdict|Ellipsis|NotImplemented|"
        r"\.\.\.|of|or|and|shape|length|each|one|the|a|an|with|by|per|to|in|from|"
        r"positive|non-negative|nonnegative|\{.*|.*\}|'.*'|\".*\"|\d.*|.* .*)",
    ),
]

# ------------------------------------------------------------------------------ API reference
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# the Parameters sections' types are words for the reader, not cross-references (no
# intersphinx for Python's own types without a network)
numpydoc_xref_param_type = False
# a public object without a docstring fails the build (with -W); a class's parameters are
# documented in its class docstring (numpydoc), so __init__ has none of its own
numpydoc_validation_checks = {"GL08"}
numpydoc_validation_exclude = {r"\.__init__$"}
# `name` in a docstring (numpydoc's way of naming a parameter or an attribute) is code,
# not a reference: references are written with their role (:func:, :class:, ...)
default_role = "literal"

# ------------------------------------------------------------------------------ Markdown, notebooks
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

EXECUTE = os.environ.get("ISBETTER_DOCS_EXECUTE", "cache")
nb_execution_mode = EXECUTE
# jupyter-cache re-executes a notebook when its code changes; one cache per version of
# isbetter, so that a release's tutorials are executed with its own code
nb_execution_cache_path = str(
    Path(os.environ.get("ISBETTER_DOCS_CACHE", HERE / "_build" / ".jupyter_cache")) / release
)
nb_execution_timeout = 900
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_merge_streams = True
# the kernels inherit these: the quick settings CI runs, the data of this checkout
os.environ.setdefault("ISBETTER_NOTEBOOK_QUICK", "1")
os.environ.setdefault("ISBETTER_ROOT", str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _copy_notebooks() -> None:
    """Copy ``notebooks/*.ipynb`` into ``docs/tutorials/`` (unchanged files are not touched).

    Sphinx reads sources under ``docs/`` only; the copies are ignored by git, and a copy
    is rewritten only when its notebook changed, so that Sphinx does not re-read it.
    """
    target = HERE / "tutorials"
    target.mkdir(exist_ok=True)
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        copy = target / notebook.name
        if not copy.exists() or not filecmp.cmp(notebook, copy, shallow=False):
            shutil.copyfile(notebook, copy)


_copy_notebooks()


from api_pages import API_MODULES, public_names  # noqa: E402


def _write_api_pages() -> None:
    """Write ``docs/api/<module>.rst``: an autosummary of every public name (ignored by git)."""
    target = HERE / "api"
    target.mkdir(exist_ok=True)
    for module, names in public_names().items():
        title = f"``{module}`` — {API_MODULES[module]}"
        lines = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", ""]
        lines += [
            f".. currentmodule:: {module}",
            "",
            ".. autosummary::",
            "   :toctree: generated",
            "",
        ]
        lines += [f"   {name}" for name in sorted(names, key=str.lower)]
        text = "\n".join(lines) + "\n"
        page = target / f"{module}.rst"
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")


_write_api_pages()

# ------------------------------------------------------------------------------ HTML
html_theme = "pydata_sphinx_theme"
html_title = f"isbetter {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_show_sourcelink = False


# ------------------------------------------------------------------------------ references
# A docstring may name an object by the module that defines it
# (``isbetter.f1.power.power_analysis``) or relative to its own module or class
# (``metric``, ``build_model``). Such a reference is linked to the object's documented page
# when the object is public (``isbetter.power_analysis``), and set as code when it exists
# but is internal (not in the API reference). A reference to a name that does not exist
# stays a warning, and so fails the build.


def _lookup(dotted: str) -> tuple[bool, object]:
    """Import ``a.b.c`` as a module or an attribute path; (found, object)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            fields = getattr(obj, "__dataclass_fields__", {})
            annotations = {}
            for klass in getattr(obj, "__mro__", ()):
                annotations.update(getattr(klass, "__annotations__", {}))
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif name in fields or name in annotations:
                obj = None  # an instance attribute: it exists, without an object to link
            else:
                return False, None
        return True, obj
    return False, None


def _documented_objects() -> dict[int, str]:
    """id(object) -> the name under which the API reference documents it."""
    import importlib

    documented = {}
    for module, names in public_names().items():
        for name in names:
            obj = getattr(importlib.import_module(module), name)
            documented.setdefault(id(obj), f"{module}.{name}")
            for member, value in vars(obj).items() if isinstance(obj, type) else ():
                if not member.startswith("_"):
                    documented.setdefault(id(value), f"{module}.{name}.{member}")
    return documented


_DOCUMENTED: dict[int, str] = {}


def _resolve(app, env, node, contnode):  # noqa: ANN001, ANN202 (Sphinx's event signature)
    """Link or set as code a reference to an existing object; leave a missing one broken."""
    from docutils import nodes
    from sphinx.util.nodes import make_refnode

    if node.get("refdomain") != "py":
        return None
    if not _DOCUMENTED:
        _DOCUMENTED.update(_documented_objects())
    target = node["reftarget"].lstrip("~.")
    module = node.get("py:module") or ""
    klass = node.get("py:class") or ""
    candidates = [target]
    if klass:
        candidates.append(f"{module}.{klass}.{target}")
    if module:
        candidates.append(f"{module}.{target}")
    # the docstring's own object, its class and its module (where it was written)
    source = str(node.source or "").rpartition("docstring of ")[2].split()
    parts = source[0].split(".") if source else []
    candidates += [".".join([*parts[:cut], target]) for cut in range(len(parts), 0, -1)]
    for candidate in candidates:
        if not candidate.startswith("isbetter"):
            continue
        found, obj = _lookup(candidate)
        if not found:
            continue
        name = _DOCUMENTED.get(id(obj)) if obj is not None else None
        if name:
            domain = env.get_domain("py")
            match = domain.objects.get(name)
            if match is not None:
                return make_refnode(
                    app.builder, node["refdoc"], match.docname, match.node_id, contnode, name
                )
        return nodes.literal(target, target)
    return None


def setup(app):  # noqa: ANN001, ANN201
    """Sphinx's hook: resolve references by object, as ``_resolve`` says."""
    app.connect("missing-reference", _resolve)
