"""readme_example.py README.md DIR: writes the README's 30-second example to
DIR/train.rapid and the output the README shows for it to DIR/expected.txt,
so the test can run the one and compare it with the other."""
import os
import re
import sys

readme, out = sys.argv[1:3]
text = open(readme).read()
example = re.search(r"## A 30-second example\n\n```\n(.*?)```", text, re.S)
shown = re.search(r"\$ build/bin/rapidc train\.rapid\n(.*?)```", text, re.S)
if not example or not shown:
    sys.exit("README.md: the 30-second example or its output was not found")
os.makedirs(out, exist_ok=True)
open(os.path.join(out, "train.rapid"), "w").write(example.group(1))
open(os.path.join(out, "expected.txt"), "w").write(shown.group(1))
