#!/usr/bin/env python3
"""The objects of a pgrx-generated install script, one block each, sorted (scripts/schema-check.sh
compares the committed sql/hlculid--VERSION.sql with what each major generates this way: pgrx's
order changes from run to run, and its source-location comments with every edit).

Usage: tools/schema_normalise.py FILE   (prints the normalised text)
Tests: tools/tests/test_schema_normalise.py.
"""
import re
import sys

BLOCK = re.compile(r"/\* <begin connected objects> \*/\n(.*?)/\* </end connected objects> \*/", re.S)
NOISE = re.compile(r"^-- (src/|hlculid::|bootstrap|requires:|finalize)")


def normalise(text):
    clean = []
    for b in BLOCK.findall(text):
        lines = [line for line in b.splitlines() if not NOISE.match(line)]
        body = "\n".join(lines).strip()
        if body and not body.startswith("/*\nThis file is auto generated"):
            clean.append(body)
    return "\n\n".join(sorted(clean))


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: tools/schema_normalise.py FILE")
    with open(argv[0]) as f:
        print(normalise(f.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
