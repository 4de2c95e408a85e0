// OpenCoreData re-exports Foundation, as Apple's CoreData does, so `import CoreData` alone is enough.
// Our own NSPredicate, NSExpression, NSSortDescriptor… shadow Foundation's stand-ins for code that
// reaches Foundation through this module (see DEVIATIONS.md for files that import Foundation directly).
@_exported import Foundation
