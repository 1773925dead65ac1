import tileops
import tilesmith
from tileops import _core as tileops_core
from tilesmith import _core as tilesmith_core


def test_distributions_share_one_version():
    assert tileops.__version__ == tilesmith.__version__
    assert tileops_core.__version__ == tilesmith_core.__version__ == tileops.__version__


def test_each_distribution_has_its_own_core():
    # tileops' core binds the spec layer only; the agent runtime lives in tilesmith's.
    assert hasattr(tileops_core, "load_manifest") and not hasattr(tileops_core, "agent")
    assert hasattr(tilesmith_core, "agent") and not hasattr(tilesmith_core, "load_manifest")


def test_tileops_never_imports_tilesmith():
    # The tileops wheel is installed without tilesmith-ai (scripts/check-tileops-alone.sh).
    import ast
    from pathlib import Path

    for path in Path(tileops.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "tilesmith" for n in names), f"{path}: {names}"
