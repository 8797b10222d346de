"""options_documented.py HELP DOC: every option `rapidc --help` lists (and
every --emit, --format and --mode value) is named in the command-line section
of docs/language.md, so the page cannot fall behind the tool."""
import re
import sys

helptext = open(sys.argv[1]).read()
doc = open(sys.argv[2]).read()
section = doc[doc.index("## Command line"):]
missing = []
for line in helptext.splitlines():
    m = re.match(r"\s+(--?[a-zA-Z][a-zA-Z0-9-]*)", line)
    if m and m.group(1) not in ("--help", "--help-list", "--version"):
        if m.group(1) not in section:
            missing.append(m.group(1))
    v = re.match(r"\s+=([a-z0-9-]+)\s", line)
    if v and v.group(1) not in section:
        missing.append("=" + v.group(1))
print("undocumented:", " ".join(missing) or "none")
sys.exit(1 if missing else 0)
