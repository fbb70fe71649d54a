#!/usr/bin/env bash
# Checks the repository's prose and recorded results; prints every finding as FILE:LINE: message
# and fails when there is one.
#   scripts/check-docs.sh
# 1. The word that names a working period of the team (see WORD below), in any tracked text file,
#    any case. Allowed: the API identifiers in ALLOWED (Catch2's Catch::Session), and this script.
# 2. A tracked file under docs/results/ larger than 1 MiB that no markdown link in README.md or
#    docs/**/*.md points to.
# 3. A relative markdown link in README.md or docs/**/*.md whose target file or folder does not
#    exist (anchors are not checked).
# 4. A work item's number ("issue" and a number) outside CHANGELOG.md and docs/results/.
# 5. docs/results/ holding more than 9,500,000 bytes of tracked files (their own sizes, not the
#    disk blocks they take): pack, summarize or drop what no table needs.
# 6. A table that declares its source JSON (`<!-- table: ... -->`) and no longer says what that
#    data says, figures and marks (scripts/doc_tables.py check; `fix` rewrites them).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import os
import re
import subprocess
import sys

WORD = "ses" + "sion"  # spelled in two parts so that this script does not match itself
ALLOWED = ["Catch::Session"]
SELF = "scripts/check-docs.sh"
LIMIT = 1 << 20
RESULTS_LIMIT = 9_500_000

files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
files = [f for f in files.decode().split("\0") if f and os.path.isfile(f)]
findings = []

# 1. the word
allowed = re.compile("|".join(re.escape(a) for a in ALLOWED))
word = re.compile(WORD, re.IGNORECASE)
ticket = re.compile(r"\b" + "iss" + r"ues? ?#?[0-9]+", re.IGNORECASE)  # split: not a match itself
for path in files:
    if path == SELF:
        continue
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except (UnicodeDecodeError, OSError):
        continue  # binary files (images, archives)
    for number, line in enumerate(lines, 1):
        if word.search(allowed.sub("", line)):
            findings.append(f"{path}:{number}: the word '{WORD}' ({line.strip()[:100]})")
        # The team's work items are not the reader's: code and docs say what, not which ticket.
        # (The history in CHANGELOG.md and the records in docs/results may name them.)
        if (not path.startswith("docs/results/") and path != "CHANGELOG.md"
                and ticket.search(line)):
            findings.append(f"{path}:{number}: a work item's number ({line.strip()[:100]})")

# Markdown links of README.md and docs/**/*.md (fenced code blocks skipped).
docs = [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]
link = re.compile(r"\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
linked = set()
for path in docs:
    fenced = False
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            for target in link.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue  # a URL or an anchor in the same page
                target = target.split("#", 1)[0]
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
                if not os.path.exists(resolved):
                    findings.append(f"{path}:{number}: link to a missing file: {target}")
                linked.add(resolved)

# 2. large unlinked results
for path in files:
    if path.startswith("docs/results/") and os.path.getsize(path) > LIMIT and path not in linked:
        size = os.path.getsize(path) / (1 << 20)
        findings.append(f"{path}:1: {size:.1f} MiB and no doc links it")

# 5. the size of docs/results
results_bytes = sum(os.path.getsize(p) for p in files if p.startswith("docs/results/"))
if results_bytes > RESULTS_LIMIT:
    findings.append(f"docs/results:1: {results_bytes:,} bytes of tracked files, more than "
                    f"{RESULTS_LIMIT:,}: pack or summarize what no table needs")

# 6. declared tables, rendered again from their data
if os.path.isfile("scripts/doc_tables.py"):
    tables = subprocess.run([sys.executable, "scripts/doc_tables.py", "check"],
                            capture_output=True, text=True, check=False)
    for line in tables.stderr.splitlines():
        if line.startswith("    "):
            findings[-1] += "\n" + line
        elif line.strip():
            findings.append(line)
    if tables.returncode != 0 and not tables.stderr.strip():
        findings.append(f"scripts/doc_tables.py:1: exit {tables.returncode}")

for finding in findings:
    print(finding)
if findings:
    print(f"check-docs: {len(findings)} finding(s)", file=sys.stderr)
    sys.exit(1)
print("check-docs: no finding")
PY
