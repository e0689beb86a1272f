"""The project as a whole: the layout's rules, settings, raw SQL under query logging, README's
examples."""
