#!/usr/bin/env python3
"""Size statistics for the Rust sources of a checkout.

Looks at every `.rs` file under `crates/*/src` (leaving out any `tests/`,
`examples/` or `benches/` directory) and prints

  * the largest files by line count,
  * the longest functions (methods, nested fns and trait default bodies
    included), non-test ones and test ones in separate lists,
  * how many non-test functions are longer than a threshold (150 lines).

A function's length runs from the line of its `fn` keyword (attributes and
doc comments above it are not counted) to the line of the brace that closes
its body, both included. Braces are matched on a copy of the file in which
comments (nested block comments too), string literals, raw strings
(`r#"..."#`), byte strings and char/byte literals are blanked out, so a `'{'`
or a `"}"` does not count; lifetimes (`'a`) are told apart from char literals.
Declarations without a body (`fn f(&self);` in a trait) are not functions here.

A function is a test function when it sits inside a `#[cfg(test)]` module
(inline, or a `#[cfg(test)] mod x;` file), in a file whose first item is
`#![cfg(test)]`, or carries `#[test]` / `#[cfg(test)]` itself.

Usage:
  python3 bench/code_stats.py                 # the checkout this file is in
  python3 bench/code_stats.py --root DIR      # another checkout
  python3 bench/code_stats.py --json          # the same, as JSON
  options: --files N (5) --fns N (10) --threshold N (150)

No dependencies beyond the Python 3 standard library.
"""

import argparse
import json
import os
import re
import sys

EXCLUDED_DIRS = {"tests", "examples", "benches"}
IDENT_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


# ---------------------------------------------------------------- lexing ---

def blank(text):
    """Return `text` with comments and the contents of string and char
    literals replaced by spaces (newlines kept, so offsets and line numbers
    stay the same). String literals keep their delimiting quotes."""
    out = list(text)
    n = len(text)
    i = 0

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        # line comment (doc comments included)
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        # block comment, nested
        if c == "/" and nxt == "*":
            depth = 1
            j = i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            wipe(i, j)
            i = j
            continue
        # raw string: r"..", r#".."#, br"..", cr"..": the prefix must start a token
        if c in "rbc" and (i == 0 or text[i - 1] not in IDENT_CHARS):
            j = i
            if text[j] in "bc" and j + 1 < n and text[j + 1] == "r":
                j += 1
            if text[j] == "r":
                k = j + 1
                while k < n and text[k] == "#":
                    k += 1
                if k < n and text[k] == '"':
                    hashes = k - (j + 1)
                    close = '"' + "#" * hashes
                    end = text.find(close, k + 1)
                    end = n if end < 0 else end + len(close)
                    wipe(k + 1, end - len(close))
                    i = end
                    continue
        # ordinary string (also b"..", c"..": the prefix is just an ident char)
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, min(j, n))
            i = j + 1
            continue
        # char literal or lifetime / loop label
        if c == "'":
            if nxt == "\\":
                # escaped char literal: '\n', '\'', '\\', '\u{..}', b'\x7f'
                j = i + 2
                j += 1  # the escaped character itself (may be a quote)
                while j < n and text[j] != "'" and text[j] != "\n":
                    j += 1
                wipe(i + 1, j)
                i = j + 1
                continue
            if i + 2 < n and text[i + 2] == "'" and nxt != "\n":
                wipe(i + 1, i + 2)  # 'x'
                i += 3
                continue
            i += 1  # a lifetime or label: leave it
            continue
        i += 1
    return "".join(out)


class LineIndex:
    def __init__(self, text):
        self.starts = [0]
        for m in re.finditer("\n", text):
            self.starts.append(m.end())

    def line(self, offset):
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1


def match_brace(code, open_at):
    """Offset of the `}` closing the `{` at `open_at` (in blanked code)."""
    depth = 0
    for j in range(open_at, len(code)):
        ch = code[j]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def body_open(code, start):
    """From just after a fn's name (or an impl/mod header), the offset of the
    `{` opening its body, or None when a `;` comes first (no body). Only
    parentheses and brackets are tracked: `->` makes `<`/`>` unreliable, and
    `[u8; 4]` must not end the signature."""
    depth = 0
    for j in range(start, len(code)):
        ch = code[j]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == "{":
            return j
        elif depth == 0 and ch == ";":
            return None
    return None


def item_prefix(code, at):
    """Text between the end of the previous item/statement and offset `at`:
    the attributes, visibility and qualifiers in front of an item."""
    j = at - 1
    depth = 0  # skip over bracketed attribute contents
    while j >= 0:
        ch = code[j]
        if ch == "]":
            depth += 1
        elif ch == "[":
            depth -= 1
        elif depth == 0 and ch in ";{}":
            break
        j -= 1
    return code[j + 1:at]


TEST_ATTR = re.compile(r"#\s*\[\s*(?:test|cfg\s*\(\s*test\s*\)|\w+::test)\b")
CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
FN_RE = re.compile(r"\bfn\s+(r#)?([A-Za-z_][A-Za-z0-9_]*)")
MOD_RE = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*([;{])")
IMPL_RE = re.compile(r"\b(impl|trait)\b")


def impl_name(header):
    """Self type (or trait name) of an `impl ... {` / `trait X {` header."""
    h = header.strip()
    if h.startswith("trait"):
        m = re.match(r"trait\s+([A-Za-z_]\w*)", h)
        return m.group(1) if m else "?"
    h = h[len("impl"):]
    # drop impl<...> generics
    h = h.lstrip()
    if h.startswith("<"):
        depth = 0
        for k, ch in enumerate(h):
            if ch == "<":
                depth += 1
            elif ch == ">" and h[k - 1] != "-":
                depth -= 1
                if depth == 0:
                    h = h[k + 1:]
                    break
    h = re.split(r"\bwhere\b", h)[0]
    # `Trait for Type` at angle depth 0
    depth = 0
    for_at = None
    for m in re.finditer(r"[<>]|\bfor\b", h):
        tok = m.group(0)
        if tok == "<":
            depth += 1
        elif tok == ">" and h[m.start() - 1] != "-":
            depth -= 1
        elif tok == "for" and depth == 0:
            for_at = m.end()
            break
    if for_at is not None:
        h = h[for_at:]
    h = h.strip().lstrip("&").strip()
    h = re.sub(r"^(?:mut\s+|dyn\s+|'\w+\s+)+", "", h)
    m = re.match(r"\$?[A-Za-z_][\w:$]*", h)  # `$t` inside macro_rules!
    return m.group(0).split("::")[-1] if m else "?"


def analyse_file(text):
    """Functions of one file: dicts with name, qual, line, end, length, test.
    Also returns the names of `#[cfg(test)] mod x;` declarations and whether
    the whole file is cfg(test)."""
    code = blank(text)
    lines = LineIndex(code)

    whole_test = bool(re.match(r"\s*(?:#!\[[^\]]*\]\s*)*?#!\[\s*cfg\s*\(\s*test\s*\)\s*\]", code))

    test_ranges = []  # (start, end) offsets of #[cfg(test)] mod blocks
    test_mod_files = []
    for m in MOD_RE.finditer(code):
        prefix = item_prefix(code, m.start())
        if not CFG_TEST.search(prefix):
            continue
        if m.group(2) == ";":
            test_mod_files.append(m.group(1))
        else:
            brace = m.end() - 1
            test_ranges.append((brace, match_brace(code, brace)))

    scopes = []  # (start, end, name) of impl/trait blocks
    for m in IMPL_RE.finditer(code):
        # an item `impl`, not `-> impl Trait` / `x: impl Trait`
        j = m.start() - 1
        while j >= 0 and code[j].isspace():
            j -= 1
        before = code[max(0, j - 5):j + 1]
        if not (j < 0 or code[j] in ";{}]" or before.endswith("unsafe") or before.endswith("pub")
                or code[j] == ")"):  # pub(crate) trait
            continue
        brace = body_open(code, m.end())
        if brace is None:
            continue
        scopes.append((brace, match_brace(code, brace), impl_name(code[m.start():brace])))

    fns = []
    for m in FN_RE.finditer(code):
        brace = body_open(code, m.end())
        if brace is None:
            continue
        close = match_brace(code, brace)
        start_line = lines.line(m.start())
        end_line = lines.line(close)
        at = m.start()
        test = whole_test or any(a < at < b for a, b in test_ranges) \
            or bool(TEST_ATTR.search(item_prefix(code, at)))
        owner = None
        for a, b, name in scopes:  # innermost enclosing impl/trait
            if a < at < b and (owner is None or a > owner[0]):
                owner = (a, name)
        name = m.group(2)
        fns.append({
            "name": name,
            "qual": (owner[1] + "::" + name) if owner else name,
            "line": start_line,
            "end": end_line,
            "length": end_line - start_line + 1,
            "test": test,
            "_at": at,
        })
    # nested fns: note their parent so a reader can tell them apart
    for f in fns:
        parent = None
        for g in fns:
            if g is not f and g["line"] <= f["line"] and g["end"] >= f["end"] and g["_at"] < f["_at"]:
                if parent is None or g["_at"] > parent["_at"]:
                    parent = g
        f["nested_in"] = parent["qual"] if parent else None
    for f in fns:
        del f["_at"]
    return fns, test_mod_files, whole_test


# ------------------------------------------------------------- the tree ---

def source_files(root):
    crates = os.path.join(root, "crates")
    out = []
    if not os.path.isdir(crates):
        return out
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS)
            for f in sorted(filenames):
                if f.endswith(".rs"):
                    out.append(os.path.join(dirpath, f))
    return out


def test_module_paths(path, names):
    """Files that `#[cfg(test)] mod name;` in `path` may refer to."""
    d, base = os.path.split(path)
    if base not in ("lib.rs", "main.rs", "mod.rs"):
        d = os.path.join(d, base[:-3])
    res = []
    for n in names:
        res.append(os.path.normpath(os.path.join(d, n + ".rs")))
        res.append(os.path.normpath(os.path.join(d, n, "mod.rs")))
    return res


def collect(root, threshold):
    root = os.path.abspath(root)
    files = source_files(root)
    per_file = {}
    test_files = set()
    sizes = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        rel = os.path.relpath(path, root)
        nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        sizes.append({"file": rel, "lines": nlines})
        fns, test_mods, whole = analyse_file(text)
        per_file[path] = (rel, fns)
        if whole:
            test_files.add(os.path.normpath(path))
        for p in test_module_paths(path, test_mods):
            test_files.add(p)
    # a file that is a cfg(test) module is test code all through
    # (and so is anything under its directory: mod.rs-style trees)
    all_fns = []
    for path, (rel, fns) in per_file.items():
        np = os.path.normpath(path)
        in_test_file = np in test_files or any(
            np.startswith(t[:-len("mod.rs")]) for t in test_files if t.endswith("mod.rs"))
        for f in fns:
            f["file"] = rel
            if in_test_file:
                f["test"] = True
            all_fns.append(f)

    key = lambda f: (-f["length"], f["file"], f["line"])
    non_test = sorted((f for f in all_fns if not f["test"]), key=key)
    test = sorted((f for f in all_fns if f["test"]), key=key)
    sizes.sort(key=lambda s: (-s["lines"], s["file"]))
    return {
        "root": root,
        "files": len(files),
        "total_lines": sum(s["lines"] for s in sizes),
        "functions": len(non_test),
        "test_functions": len(test),
        "threshold": threshold,
        "non_test_over_threshold": sum(1 for f in non_test if f["length"] > threshold),
        "largest_files": sizes,
        "longest_functions": non_test,
        "longest_test_functions": test,
    }


def fn_row(f):
    where = "%s:%d-%d" % (f["file"], f["line"], f["end"])
    name = f["qual"] + ("  (in %s)" % f["nested_in"] if f["nested_in"] else "")
    return "%6d  %-40s %s" % (f["length"], name, where)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here),
                    help="checkout to measure (default: the one this script is in)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of text")
    ap.add_argument("--files", type=int, default=5, help="how many largest files (5)")
    ap.add_argument("--fns", type=int, default=10, help="how many longest functions (10)")
    ap.add_argument("--threshold", type=int, default=150,
                    help="count non-test functions longer than this many lines (150)")
    args = ap.parse_args(argv)

    if not os.path.isdir(os.path.join(args.root, "crates")):
        ap.error("no crates/ directory under %s" % args.root)
    s = collect(args.root, args.threshold)

    if args.json:
        out = dict(s)
        out["largest_files"] = s["largest_files"][:args.files]
        out["longest_functions"] = s["longest_functions"][:args.fns]
        out["longest_test_functions"] = s["longest_test_functions"][:args.fns]
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0

    print("root: %s" % s["root"])
    print("%d .rs files under crates/*/src, %d lines; %d functions, %d test functions"
          % (s["files"], s["total_lines"], s["functions"], s["test_functions"]))
    print("\nlargest files (lines):")
    for f in s["largest_files"][:args.files]:
        print("%6d  %s" % (f["lines"], f["file"]))
    print("\nlongest non-test functions (lines, fn line to closing brace):")
    for f in s["longest_functions"][:args.fns]:
        print(fn_row(f))
    print("\nlongest test functions:")
    for f in s["longest_test_functions"][:args.fns]:
        print(fn_row(f))
    print("\nnon-test functions longer than %d lines: %d"
          % (s["threshold"], s["non_test_over_threshold"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
