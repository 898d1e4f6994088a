"""mariadb-backup: backup -> prepare -> restore into a fresh server -> CHECKSUM TABLE equal,
the flow of probes/shared/physical_backup.py with the tool the MariaDB server image ships.

The component's image is both the server and the tool (the official `mariadb` image
installs `mariadb-backup` next to the server), so the tool always matches the server's
version. mariadb-backup reads its connection options from `[mariadb-backup]`.
"""

from __future__ import annotations

from ecoready.probes.shared.physical_backup import BackupTool, PhysicalBackupProbe

TOOL = BackupTool(binary="mariadb-backup", group="mariadb-backup")


class MariabackupProbe(PhysicalBackupProbe):
    kind = "mariabackup"
    tool = TOOL


PROBE = MariabackupProbe
