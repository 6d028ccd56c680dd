#!/usr/bin/env python3
"""The README is a front door and docs/ the manual (check_docs.py ROOT):
- README.md is under 260 lines and shows the quick start's two commands as CI runs them;
- every relative link in README.md and docs/*.md names a file that exists, and a #anchor into a
  Markdown file names one of its headings (GitHub's slugs);
- every page of docs/ is linked from README.md;
- no "issue N": a reader cannot follow the project's issue numbers, so the text says what, not which;
- a recipe that writes a key file writes it under umask 077, so it is never readable by others, not
  even until a chmod after it.
Prints one line per fault, FILE:LINE first, and exits 1 if there is any."""
import os, re, sys

MAX_README_LINES = 260
QUICK_START = ["bash tools/demo.sh    # install what is missing, build, and run the main job",
               "bash tools/test.sh    # build if needed and run every test (GPU tests are skipped without a GPU)"]
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
ISSUE = re.compile(r'\bissues? #?[0-9]', re.I)
KEY_WRITE = re.compile(r'>\s*\S*key\b')  # a shell redirect into a key file
PRIVATE = re.compile(r'\bumask 0?077\b')


def code_lines(text):
    """(line number, line) inside fenced code blocks."""
    fence = False
    for n, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fence = not fence
        elif fence:
            yield n, line


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code removed."""
    fence = False
    for n, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if not fence:
            yield n, re.sub(r'`[^`]*`', '', line)


def slugs(path):
    """GitHub's anchors for the headings of a Markdown file."""
    out, seen = set(), {}
    for _, line in prose_lines(open(path, encoding='utf-8').read()):
        m = re.match(r'#{1,6} +(.*?) *#* *$', line)
        if not m:
            continue
        s = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f'{s}-{k}')
    return out


def check(root):
    root = os.path.abspath(root)
    faults = []
    readme = os.path.join(root, 'README.md')
    docs = os.path.join(root, 'docs')
    pages = sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith('.md'))
    text = open(readme, encoding='utf-8').read()
    n = text.count('\n') + (0 if text.endswith('\n') else 1)
    if n >= MAX_README_LINES:
        faults.append(f'README.md: {n} lines (the rule: under {MAX_README_LINES}; the manual goes in docs/)')
    lines = text.split('\n')
    for cmd in QUICK_START:
        if cmd not in lines:
            faults.append(f'README.md: the quick start command is missing or changed: {cmd}')
    linked = set()
    for path in [readme] + pages:
        rel = os.path.relpath(path, root)
        for ln, line in prose_lines(open(path, encoding='utf-8').read()):
            if ISSUE.search(line):
                faults.append(f'{rel}:{ln}: an issue number ("{ISSUE.search(line).group(0)}"): say what, not which')
            for target in LINK.findall(line):
                if re.match(r'[a-z][a-z0-9+.-]*:', target):  # https:, mailto:
                    continue
                file, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(dest):
                    faults.append(f'{rel}:{ln}: link to {target}: no such file ({os.path.relpath(dest, root)})')
                    continue
                if path == readme:
                    linked.add(dest)
                if anchor and dest.endswith('.md') and anchor not in slugs(dest):
                    faults.append(f'{rel}:{ln}: link to {target}: {os.path.relpath(dest, root)} has no heading #{anchor}')
        for ln, line in code_lines(open(path, encoding='utf-8').read()):
            m = KEY_WRITE.search(line)
            if m and not PRIVATE.search(line[:m.start()]):
                faults.append(f'{rel}:{ln}: a key file written without umask 077 before it: readable by others '
                              f'until a chmod; write it in (umask 077 && ...)')
    for page in pages:
        if page not in linked:
            faults.append(f'README.md: docs/{os.path.basename(page)} is not linked from the README')
    return faults


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: check_docs.py ROOT')
    faults = check(sys.argv[1])
    for f in faults:
        print(f)
    sys.exit(1 if faults else 0)
