"""The importers (memory/importers/): LoCoMo, transcripts, markdown vaults, hostile files."""
