"""Command line: ``python -m numbacast`` prints the demo table; ``python -m numbacast bench`` times casts."""

import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        from .bench import main as bench
        return bench(argv[1:])
    if argv:
        print(f"usage: python -m numbacast   (unknown arguments: {' '.join(argv)})", file=sys.stderr)
        return 2
    from .demo import main as demo
    demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
