"""Leave room on each page so recall's access counters update in place.

``access_count`` and ``last_accessed_at`` are in no index, so with free space
on the page PostgreSQL updates the row as a heap-only tuple: no new entries in
the HNSW, full-text or B-tree indexes. With full pages every touch re-inserted
the row into all of them (several milliseconds on a 100k-fact HNSW graph).
Applies to pages written from now on; ``VACUUM FULL memories_memory`` rewrites
an existing table.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_memory_checked_at")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory SET (fillfactor = 85)",
            reverse_sql="ALTER TABLE memories_memory RESET (fillfactor)",
        ),
    ]
