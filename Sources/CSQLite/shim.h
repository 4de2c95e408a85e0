#include <sqlite3.h>

/// SQLITE_TRANSIENT as a function: Swift cannot import the macro's cast of -1 to a destructor.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
