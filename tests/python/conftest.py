import sys
from pathlib import Path

# The helpers (launch.py) live beside the tests, not in an installed package.
sys.path.insert(0, str(Path(__file__).resolve().parent))
