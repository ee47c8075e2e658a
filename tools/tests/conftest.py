"""The tools' tests: tools/*.py imported as modules, each tested on small fixtures in tmp_path."""
import pathlib
import sys

TOOLS = pathlib.Path(__file__).resolve().parents[1]
REPO = TOOLS.parent
sys.path.insert(0, str(TOOLS))
