"""The examples are imported by the tests that check them."""

import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
REPOSITORY = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(EXAMPLES))
