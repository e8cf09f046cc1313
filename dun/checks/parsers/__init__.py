"""Output parsers of the `command` check: turn what a tool prints, or the report file it writes, into items.

Line parsers (`lines`, `regex`, `json-lines`, `go-test-json`) read the output as it streams; document parsers
(`junit-xml`, `json`, `sarif`) read one whole document. With `file`, any of them reads that file instead.
"""
