"""Several loops at once: git worktrees for them, the fleet store of what they share per agent account (this
machine's file, or Redis for several machines) with its registry of loops, `dun fleet status` and `dun watch`'s view."""
