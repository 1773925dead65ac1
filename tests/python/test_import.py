import _tscore
import tileops
import tilesmith


def test_packages_share_one_core():
    assert tileops.__version__ == tilesmith.__version__ == _tscore.__version__
