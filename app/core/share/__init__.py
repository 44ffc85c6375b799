"""The shareable report: one self-contained HTML file per job or per comparison."""
