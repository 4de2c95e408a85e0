/// Core Data's error codes in `NSCocoaErrorDomain`, with Apple's names and numeric values, and
/// the userInfo keys Apple puts in them.
///
/// Related documentation: Core Data Constants, "Core Data Error Codes" and "Error User Info Keys".

/// A generic validation error (also the code of a failed validation predicate without a numeric warning).
public let NSManagedObjectValidationError = 1550
/// One or more uniqueness constraints were violated.
public let NSManagedObjectConstraintValidationError = 1551
/// Several validation errors; the individual errors are under ``NSDetailedErrorsKey``.
public let NSValidationMultipleErrorsError = 1560
/// A non-optional property has no value.
public let NSValidationMissingMandatoryPropertyError = 1570
/// A to-many relationship has fewer objects than its minimum count.
public let NSValidationRelationshipLacksMinimumCountError = 1580
/// A to-many relationship has more objects than its maximum count.
public let NSValidationRelationshipExceedsMaximumCountError = 1590
/// A delete was refused by a relationship with the deny delete rule.
public let NSValidationRelationshipDeniedDeleteError = 1600
/// A number is larger than the attribute's maximum.
public let NSValidationNumberTooLargeError = 1610
/// A number is smaller than the attribute's minimum.
public let NSValidationNumberTooSmallError = 1620
/// A date is later than the attribute's maximum.
public let NSValidationDateTooLateError = 1630
/// A date is earlier than the attribute's minimum.
public let NSValidationDateTooSoonError = 1640
/// A date is invalid.
public let NSValidationInvalidDateError = 1650
/// A string is longer than the attribute's maximum length.
public let NSValidationStringTooLongError = 1660
/// A string is shorter than the attribute's minimum length.
public let NSValidationStringTooShortError = 1670
/// A string does not match the attribute's regular expression.
public let NSValidationStringPatternMatchingError = 1680
/// A URI is invalid.
public let NSValidationInvalidURIError = 1690
/// A context could not be locked.
public let NSManagedObjectContextLockingError = 132_000
/// A coordinator could not be locked.
public let NSPersistentStoreCoordinatorLockingError = 132_010
/// An object referenced a deleted or missing object.
public let NSManagedObjectReferentialIntegrityError = 133_000
/// An object related to an object in another store that cannot be reached.
public let NSManagedObjectExternalRelationshipError = 133_010
/// An optimistic-locking merge conflict (`"conflictList"` holds the conflicts).
public let NSManagedObjectMergeError = 133_020
/// A uniqueness-constraint conflict (`"conflictList"` holds the conflicts).
public let NSManagedObjectConstraintMergeError = 133_021
/// An unknown persistent store type.
public let NSPersistentStoreInvalidTypeError = 134_000
/// The store's type does not match the type asked for.
public let NSPersistentStoreTypeMismatchError = 134_010
/// The store's schema is incompatible with the model.
public let NSPersistentStoreIncompatibleSchemaError = 134_020
/// A generic save error.
public let NSPersistentStoreSaveError = 134_030
/// Some stores could not be saved.
public let NSPersistentStoreIncompleteSaveError = 134_040
/// Unresolved conflicts when saving (`NSPersistentStoreSaveConflictsErrorKey`).
public let NSPersistentStoreSaveConflictsError = 134_050
/// A generic Core Data error.
public let NSCoreDataError = 134_060
/// A store operation failed.
public let NSPersistentStoreOperationError = 134_070
/// A store could not be opened.
public let NSPersistentStoreOpenError = 134_080
/// A store timed out.
public let NSPersistentStoreTimeoutError = 134_090
/// A store does not support the request's type.
public let NSPersistentStoreUnsupportedRequestTypeError = 134_091
/// The model's version hashes do not match the store's.
public let NSPersistentStoreIncompatibleVersionHashError = 134_100
/// A migration failed.
public let NSMigrationError = 134_110
/// A migration failed because of a violated uniqueness constraint.
public let NSMigrationConstraintViolationError = 134_111
/// A migration was cancelled.
public let NSMigrationCancelledError = 134_120
/// The migration manager was given a missing source store.
public let NSMigrationMissingSourceModelError = 134_130
/// No mapping model was found for a migration.
public let NSMigrationMissingMappingModelError = 134_140
/// A migration failed because of a problem with the source store.
public let NSMigrationManagerSourceStoreError = 134_150
/// A migration failed because of a problem with the destination store.
public let NSMigrationManagerDestinationStoreError = 134_160
/// A migration failed in an entity migration policy.
public let NSEntityMigrationPolicyError = 134_170
/// An SQLite error (`NSSQLiteErrorDomain` holds the SQLite code).
public let NSSQLiteError = 134_180
/// An inferred mapping model could not be created.
public let NSInferredMappingModelError = 134_190
/// Importing external records (Spotlight) failed.
public let NSExternalRecordImportError = 134_200
/// A persistent history token expired.
public let NSPersistentHistoryTokenExpiredError = 134_301
/// A managed object model a staged migration refers to cannot be found or loaded.
public let NSManagedObjectModelReferenceNotFoundError = 134_504
/// A staged migration needs the store's metadata written by a newer Core Data first.
public let NSStagedMigrationFrameworkVersionMismatchError = 134_505
/// A staged migration was asked to migrate to an earlier model version.
public let NSStagedMigrationBackwardMigrationError = 134_506

/// The key of the object that failed validation.
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// The key of the property name that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The key of the predicate that failed validation.
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// The key of the value that failed validation.
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// The key of the individual errors of a multiple-errors error (1560).
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The key of the stores an error is about.
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// The key of the objects an error is about.
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// The key of the conflicts of a save-conflicts error.
public let NSPersistentStoreSaveConflictsErrorKey = "NSPersistentStoreSaveConflictsErrorKey"
/// The domain of the SQLite result code in an SQLite error's userInfo.
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

/// Builds Core Data's Cocoa errors in one place, so codes and keys are spelled once.
package enum CoreDataError {
    package static func make(_ code: Int, _ description: String, _ userInfo: [String: Any] = [:]) -> NSError {
        var info = userInfo
        info[NSLocalizedDescriptionKey] = description
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
    }

    /// A validation error about one property of one object, with Apple's userInfo keys.
    static func validation(
        _ code: Int, _ description: String, object: NSManagedObject?, key: String?, value: Any?,
        predicate: NSPredicate? = nil
    ) -> NSError {
        var info: [String: Any] = [:]
        if let object { info[NSValidationObjectErrorKey] = object }
        if let key { info[NSValidationKeyErrorKey] = key }
        if let value { info[NSValidationValueErrorKey] = value }
        if let predicate { info[NSValidationPredicateErrorKey] = predicate }
        return make(code, description, info)
    }

    /// Apple's rule for reporting validation: one error as itself, several as 1560 with the list
    /// under ``NSDetailedErrorsKey`` (Core Data Programming Guide, "Object Validation").
    static func combining(_ errors: [Error]) -> Error? {
        guard let first = errors.first else { return nil }
        if errors.count == 1 { return first }
        var flattened: [Error] = []
        for error in errors {
            let nsError = error as NSError
            if nsError.domain == NSCocoaErrorDomain, nsError.code == NSValidationMultipleErrorsError,
                let details = nsError.userInfo[NSDetailedErrorsKey] as? [Error]
            {
                flattened += details
            } else {
                flattened.append(error)
            }
        }
        return make(
            NSValidationMultipleErrorsError, "Multiple validation errors occurred.", [NSDetailedErrorsKey: flattened])
    }
}
