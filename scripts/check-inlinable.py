#!/usr/bin/env python3
"""Fails when a `package` struct, enum or class has `@inlinable` members but is not itself `@usableFromInline`.

Swift 6.3 compiles such members as ordinary calls across modules, without a word: the body is not offered to
the caller's module, so a scan loop in BoardwalkQuery calls `EventRun.next()` per event instead of inlining it
(a one-onboarding funnel took 70 ms instead of 30 ms). Marking the type `@usableFromInline` restores inlining.
"""
import collections
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
declaration = re.compile(
    r"^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|internal|private|fileprivate|final|indirect)\s+)*"
    r"(struct|enum|class|actor|extension|protocol)\s+([\w.]+)")
package_type = re.compile(r"^\s*(@usableFromInline\s+)?package\s+(final\s+)?(struct|enum|class)\s+(\w+)")

inlinable_members = collections.Counter()
package_types = {}
for path in sorted((root / "Sources").rglob("*.swift")):
    lines = path.read_text().split("\n")
    enclosing = []  # (indentation, name) of the declarations around the current line
    for number, line in enumerate(lines, 1):
        if match := declaration.match(line):
            indentation = len(match.group(1))
            enclosing = [d for d in enclosing if d[0] < indentation] + [(indentation, match.group(3))]
        if match := package_type.match(line):
            marked = match.group(1) is not None or "@usableFromInline" in lines[number - 2]
            package_types[match.group(4)] = (path.relative_to(root), number, marked)
        if "@inlinable" in line:
            indentation = len(line) - len(line.lstrip())
            owners = [d for d in enclosing if d[0] < indentation]
            if owners:
                inlinable_members[owners[-1][1].split(".")[-1]] += 1

unmarked = [(name, where) for name, where in sorted(package_types.items()) if inlinable_members[name] and not where[2]]
for name, (path, number, _) in unmarked:
    print(f"{path}:{number}: package type {name} has @inlinable members but is not @usableFromInline;"
          " across modules they would not be inlined")
sys.exit(1 if unmarked else 0)
