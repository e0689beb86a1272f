"""Liveness in two partial indexes instead of one full index on decayed_at (docs/DESIGN.md,
"Two engines: plans without statistics").

SQLite without statistics (no store is ever ANALYZEd) takes any equality for selective, and it
counted `decayed_at IS NULL` on memory_node_decayed_at as one: queries that needed the store
clock's, the event clock's or the decay candidates' index walked every live node instead. At 100k
without statistics: recall's date list 30 ms, the decay mark's candidates 47 ms, browse by most
read 69 ms, integrity's vector check 117 ms.

- memory_node_decayed: the forgotten, by when (decayed lists and counts). `decayed_at IS NULL`
  does not imply its condition, so no live query can take it.
- memory_node_live: the live ids, for "which of these are live" (recall, read, walk) without
  reading the rows. Its key leads with the id, so `decayed_at IS NULL` alone finds no equality
  in it to mistake for a selective one; recall names it (memory.visibility.live_at).

Indexes by name only: no table is rebuilt, so SQLite keeps the node's triggers. The decay sweep
does the same index work as before (one delete, one insert a node).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0016_event_partial_indexes'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='node',
            name='memory_node_decayed_at',
        ),
        migrations.AddIndex(
            model_name='node',
            index=models.Index(condition=models.Q(('decayed_at__isnull', False)), fields=['decayed_at'], name='memory_node_decayed'),
        ),
        migrations.AddIndex(
            model_name='node',
            index=models.Index(condition=models.Q(('decayed_at__isnull', True)), fields=['id', 'decayed_at'], name='memory_node_live'),
        ),
    ]
