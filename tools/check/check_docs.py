#!/usr/bin/python3
"""Render reStructuredText files with docutils; any warning fails.

usage: tools/check/check_docs.py FILE...
"""
import io
import sys

import docutils.core
import docutils.utils


def render(path):
    errors = io.StringIO()
    try:
        docutils.core.publish_file(
            source_path=path, destination=io.StringIO(), writer_name='html',
            settings_overrides={'report_level': 2, 'halt_level': 5,
                                'warning_stream': errors})
    except docutils.utils.SystemMessage as e:
        errors.write(str(e))
    return errors.getvalue().strip()


def main():
    passed = failed = 0
    for path in sys.argv[1:]:
        problems = render(path)
        if problems:
            failed += 1
            print(f'docs: FAIL {path}\n{problems}')
        else:
            passed += 1
            print(f'docs: ok {path}')
    print(f'docs: {passed} passed, {failed} failed, 0 skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
