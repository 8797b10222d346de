"""tokenize.py SRC: runs editors/rapid.tmLanguage.json's patterns over every
.rapid file of examples/ and stdlib/ (each character outside whitespace must
fall in a token, as an editor would colour it) and checks that the TextMate
grammar and the Vim syntax both name every keyword of grammar/Rapid.g4 and
every declaration kind of compiler/lib/Spec/Schema.cpp."""
import glob
import json
import os
import re
import sys

src = sys.argv[1]
tm = json.load(open(os.path.join(src, "editors", "rapid.tmLanguage.json")))
vim = open(os.path.join(src, "editors", "vim", "syntax", "rapid.vim")).read()


def flatten(pattern):
    """Top-level patterns with includes resolved, in order."""
    if "include" in pattern:
        return flatten(tm["repository"][pattern["include"].lstrip("#")])
    if "patterns" in pattern:
        return [p for sub in pattern["patterns"] for p in flatten(sub)]
    return [pattern]


patterns = [p for top in tm["patterns"] for p in flatten(top)]
compiled = []
for p in patterns:
    if "match" in p:
        compiled.append(("match", re.compile(p["match"], re.M), None, p))
    else:
        compiled.append(("block", re.compile(p["begin"]), re.compile(p["end"]), p))

problems, files, tokens = [], 0, 0
for path in sorted(glob.glob(os.path.join(src, "examples", "**", "*.rapid"), recursive=True) +
                   glob.glob(os.path.join(src, "stdlib", "*.rapid"))):
    text = open(path, encoding="utf-8").read()
    files += 1
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        for kind, begin, end, _ in compiled:
            m = begin.match(text, pos)
            if not m or m.end() == pos:
                continue
            if kind == "block":
                e = end.search(text, m.end())
                pos = e.end() if e else len(text)
            else:
                pos = m.end()
            tokens += 1
            break
        else:
            line = text.count("\n", 0, pos) + 1
            col = pos - (text.rfind("\n", 0, pos) + 1) + 1
            problems.append(f"{os.path.relpath(path, src)}:{line}:{col}: no token for {text[pos]!r}")
            pos += 1

grammar = open(os.path.join(src, "grammar", "Rapid.g4")).read()
keywords = sorted(set(re.findall(r"'([a-z]+)'", grammar)))
schema = open(os.path.join(src, "compiler", "lib", "Spec", "Schema.cpp")).read()
table = schema[schema.index("kKinds{{"):]
kinds = re.findall(r'\{"([a-z]+)", "', table[:table.index("}};")])
tm_keywords = set(re.search(r"\(([a-z|]+)\)", tm["repository"]["keywords"]["match"]).group(1).split("|"))
tm_kinds = set(re.search(r"\(([a-z|]+)\)", tm["repository"]["declarations"]["match"]).group(1).split("|"))
vim_keywords = set(re.search(r"syn keyword rapidKeyword (.*)", vim).group(1).split())
vim_kinds = set(re.search(r"syn keyword rapidDecl (.*)", vim).group(1).split())
for k in keywords:
    if k not in tm_keywords or k not in vim_keywords:
        problems.append(f"keyword '{k}' of grammar/Rapid.g4 is missing from an editor file")
for k in kinds:
    if k not in tm_kinds or k not in vim_kinds:
        problems.append(f"declaration kind '{k}' is missing from an editor file")

print(f"{files} files, {tokens} tokens, {len(keywords)} keywords, {len(kinds)} declaration kinds")
print("problems:", "none" if not problems else "")
for p in problems[:20]:
    print(" ", p)
sys.exit(1 if problems else 0)
