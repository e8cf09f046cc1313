"""The operator's view of dun's runs: a SQLite history of every run and iteration (`store`, `schema`, `rows`,
rebuilt from the JSON logs by `sync`), the deficiency detector (`deficiency`) and its review items (`review`),
bounded status reports with acknowledgement (`reports`). The calls the loop engine makes are `dun.loop.operator`.

The HTML report is `dun.report_html`; notifications are `dun.notify`. Modules import lazily: `import dun.history`
costs nothing.
"""
