"""A trigram index beside the word index, for scripts written without spaces.

The word index (unicode61) makes one token of a whole run of Han, kana or Thai, so `東京` never
matches `東京タワーは赤い`. FTS5's trigram tokenizer (SQLite 3.34+) indexes every three-character
substring instead. Only bodies holding a character of such a script are indexed (the trigger's
WHEN): a trigram index of all text would be about three times the text, and Latin text is
already served by the word index. The table keeps its own copy of those bodies, so a query too
short for trigrams (one or two characters) scans only them, never every node.
"""

from django.db import migrations

# Han (with radicals, compatibility ideographs and extension A), Hiragana, Katakana, Hangul,
# Thai, Lao, Myanmar, Khmer. GLOB ranges compare code points.
SPACELESS_GLOB = "*[⺀-⿟぀-ヿㇰ-ㇿ㐀-䶿一-鿿豈-﫿가-힯ᄀ-ᇿ฀-๿຀-໿က-႟ក-៿]*"

FORWARD = [
    # Recall's date list (memory.recall.dates) asks for nodes by event time.
    "CREATE INDEX memory_node_event_time ON memory_node (COALESCE(referent_time, created_at))",
    "CREATE VIRTUAL TABLE memory_node_trigram USING fts5(body, tokenize='trigram')",
    f"""
    CREATE TRIGGER memory_node_trigram_insert AFTER INSERT ON memory_node
    WHEN NEW.body GLOB '{SPACELESS_GLOB}'
    BEGIN INSERT INTO memory_node_trigram(rowid, body) VALUES (NEW.id, NEW.body); END
    """,
    f"""
    INSERT INTO memory_node_trigram(rowid, body)
    SELECT id, body FROM memory_node WHERE body GLOB '{SPACELESS_GLOB}'
    """,
]

def _sqlite(statements: list[str]):
    """FTS5 and its trigram tokenizer are SQLite's; PostgreSQL has its own text search."""

    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor == "sqlite":
            for sql in statements:
                schema_editor.execute(sql)

    return run


BACKWARD = [
    "DROP INDEX IF EXISTS memory_node_event_time",
    "DROP TRIGGER IF EXISTS memory_node_trigram_insert",
    "DROP TABLE IF EXISTS memory_node_trigram",
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_referent_time_index")]

    operations = [migrations.RunPython(_sqlite(FORWARD), _sqlite(BACKWARD))]
