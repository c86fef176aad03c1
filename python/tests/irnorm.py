# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A canonical text of a printed func.func, for comparing IR up to SSA names
and the order of independent function-level ops.

The printer numbers values in textual order, so two functions that differ
only in the order of their parameter slices (which the Python front end
makes where a cell asks for them, the hand-written examples gate by gate)
print differently. Here every function-level op gets a key (its text with
operands replaced by their definers' keys and the names it defines
renumbered), and the ops are listed in a topological order that breaks ties
by key: identical for IR that is equal up to names and independent order.
"""
import hashlib
import re

_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+(?:#\d+)?")


def _groups(text):
    """The function-level ops of the single func.func in `text` (lines)."""
    lines = [l for l in text.splitlines() if l.strip()]
    start = next(i for i, l in enumerate(lines) if l.lstrip().startswith("func.func"))
    header = lines[start]
    indent = len(header) - len(header.lstrip())
    body_indent = None
    groups, cur = [], None
    for line in lines[start + 1:]:
        ind = len(line) - len(line.lstrip())
        if ind <= indent:  # the closing brace of the function
            break
        if body_indent is None:
            body_indent = ind
        if ind == body_indent and not line.lstrip().startswith("}"):
            cur = [line.strip()]
            groups.append(cur)
        else:
            cur.append(line.strip())
    return header.strip(), groups


def _defs(group):
    """Names defined by the op itself (its results) and inside its regions."""
    first = group[0]
    own = []
    m = re.match(r"^((?:%[\w$.\-]+(?::\d+)?(?:, )?)+) = ", first)
    if m:
        own = [n.split(":")[0] for n in m.group(1).split(", ")]
    inner = []
    for line in group[1:]:
        if line.startswith("^"):
            inner += re.findall(r"(%[\w$.\-]+):", line)
        m = re.match(r"^((?:%[\w$.\-]+(?::\d+)?(?:, )?)+) = ", line)
        if m:
            inner += [n.split(":")[0] for n in m.group(1).split(", ")]
    return own, inner


def canonical(text):
    header, groups = _groups(text)
    key_of = {}  # function-level name -> key of its definer
    infos = []
    for g in groups:
        own, inner = _defs(g)
        local = {n: f"%self{k}" for k, n in enumerate(own)}
        local.update({n: f"%i{k}" for k, n in enumerate(inner)})
        deps = set()

        def rename(m):
            tok = m.group(0)
            base, _, idx = tok.partition("#")
            suffix = "#" + idx if idx else ""
            if base in local:
                return local[base] + suffix
            if base in key_of:
                deps.add(base)
                return "@" + key_of[base] + suffix
            return tok  # a function argument
        body = "\n".join(_NAME.sub(rename, l) for l in g)
        key = hashlib.sha1(body.encode()).hexdigest()[:12]
        for n in own:
            key_of[n] = key
        infos.append((key, body, {key_of[d] for d in deps}))
    # Topological order, ties broken by key.
    done, out, pending = set(), [], list(infos)
    while pending:
        ready = sorted((i for i in pending if i[2] <= done), key=lambda i: i[0])
        if not ready:
            raise ValueError("cyclic function body")
        i = ready[0]
        pending.remove(i)
        done.add(i[0])
        out.append(i[1])
    return header + "\n" + "\n".join(out)
