"""Co-change hints: which files usually change together, learned from git history and the loop's iteration logs
(graph.py the scoring, gitlog.py the reading of history, index.py the index kept in `.dun/cochange.idx`), shown in
`dun iterate`'s prompt and by `dun hints FILE`. Advice for the agent only: nothing here changes a verdict."""
