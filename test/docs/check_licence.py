"""Every source file of the project names its licence (LICENSE) in an SPDX
line near its top: C/C++/TableGen sources and headers, CMake files, Python
and shell scripts, outside the tests (their C++ test passes aside), docs and
examples."""
import os
import sys

SPDX = "SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"
ROOTS = ["include", "lib", "tools", "test/lib", "python/lstmc", "python/src", "python/examples",
         "bench", "scripts", "cmake", ".ci"]
EXTS = (".cpp", ".h", ".c", ".td", ".py", ".sh", ".cmake", ".in")


def wanted(name):
    return name.endswith(EXTS) or name in ("CMakeLists.txt", "run")


def main():
    src = sys.argv[1]
    missing, checked = [], 0
    for root in ROOTS + ["."]:
        top = os.path.join(src, root)
        walk = [(top, [], os.listdir(top))] if root == "." else os.walk(top)
        for d, dirs, files in walk:
            dirs[:] = [x for x in dirs if x not in ("__pycache__", "build")]
            for name in files:
                if not wanted(name) or (root == "." and name != "CMakeLists.txt"):
                    continue
                path = os.path.join(d, name)
                with open(path, encoding="utf-8") as f:
                    head = "".join(f.readline() for _ in range(8))
                checked += 1
                if SPDX not in head:
                    missing.append(os.path.relpath(path, src))
    if not os.path.isfile(os.path.join(src, "LICENSE")):
        missing.append("LICENSE (the file itself)")
    for m in missing:
        print("no SPDX line:", m)
    print(f"{checked} files checked, {len(missing)} without the licence line")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
