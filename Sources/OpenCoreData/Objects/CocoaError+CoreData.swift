/// Core Data's error codes as `CocoaError.Code` members, Apple's Swift spelling of the
/// constants in ``NSManagedObjectValidationError`` and the rest of `CoreDataErrors.h`, so
/// `catch CocoaError.validationMissingMandatoryProperty` and `error.code == .persistentStoreOpen`
/// port unchanged. The older names ending in `Error` are kept as Apple keeps them.
///
/// Related documentation: CocoaError.Code, "Core Data Errors".
extension CocoaError.Code {
    /// `NSManagedObjectValidationError`.
    public static var managedObjectValidation: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectValidationError)
    }
    /// `NSManagedObjectConstraintValidationError`.
    public static var managedObjectConstraintValidation: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectConstraintValidationError)
    }
    /// `NSValidationMultipleErrorsError`.
    public static var validationMultipleErrors: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationMultipleErrorsError)
    }
    /// `NSValidationMissingMandatoryPropertyError`.
    public static var validationMissingMandatoryProperty: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationMissingMandatoryPropertyError)
    }
    /// `NSValidationRelationshipLacksMinimumCountError`.
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipLacksMinimumCountError)
    }
    /// `NSValidationRelationshipExceedsMaximumCountError`.
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipExceedsMaximumCountError)
    }
    /// `NSValidationRelationshipDeniedDeleteError`.
    public static var validationRelationshipDeniedDelete: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipDeniedDeleteError)
    }
    /// `NSValidationNumberTooLargeError`.
    public static var validationNumberTooLarge: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationNumberTooLargeError)
    }
    /// `NSValidationNumberTooSmallError`.
    public static var validationNumberTooSmall: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationNumberTooSmallError)
    }
    /// `NSValidationDateTooLateError`.
    public static var validationDateTooLate: CocoaError.Code { CocoaError.Code(rawValue: NSValidationDateTooLateError) }
    /// `NSValidationDateTooSoonError`.
    public static var validationDateTooSoon: CocoaError.Code { CocoaError.Code(rawValue: NSValidationDateTooSoonError) }
    /// `NSValidationInvalidDateError`.
    public static var validationInvalidDate: CocoaError.Code { CocoaError.Code(rawValue: NSValidationInvalidDateError) }
    /// `NSValidationStringTooLongError`.
    public static var validationStringTooLong: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringTooLongError)
    }
    /// `NSValidationStringTooShortError`.
    public static var validationStringTooShort: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringTooShortError)
    }
    /// `NSValidationStringPatternMatchingError`.
    public static var validationStringPatternMatching: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringPatternMatchingError)
    }
    /// `NSValidationInvalidURIError`.
    public static var validationInvalidURI: CocoaError.Code { CocoaError.Code(rawValue: NSValidationInvalidURIError) }
    /// `NSManagedObjectContextLockingError`.
    public static var managedObjectContextLocking: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectContextLockingError)
    }
    /// `NSPersistentStoreCoordinatorLockingError`.
    public static var persistentStoreCoordinatorLocking: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreCoordinatorLockingError)
    }
    /// `NSManagedObjectReferentialIntegrityError`.
    public static var managedObjectReferentialIntegrity: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectReferentialIntegrityError)
    }
    /// `NSManagedObjectExternalRelationshipError`.
    public static var managedObjectExternalRelationship: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectExternalRelationshipError)
    }
    /// `NSManagedObjectMergeError`.
    public static var managedObjectMerge: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectMergeError) }
    /// `NSManagedObjectConstraintMergeError`.
    public static var managedObjectConstraintMerge: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectConstraintMergeError)
    }
    /// `NSPersistentStoreInvalidTypeError`.
    public static var persistentStoreInvalidType: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreInvalidTypeError)
    }
    /// `NSPersistentStoreTypeMismatchError`.
    public static var persistentStoreTypeMismatch: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreTypeMismatchError)
    }
    /// `NSPersistentStoreIncompatibleSchemaError`.
    public static var persistentStoreIncompatibleSchema: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompatibleSchemaError)
    }
    /// `NSPersistentStoreSaveError`.
    public static var persistentStoreSave: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreSaveError) }
    /// `NSPersistentStoreIncompleteSaveError`.
    public static var persistentStoreIncompleteSave: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompleteSaveError)
    }
    /// `NSPersistentStoreSaveConflictsError`.
    public static var persistentStoreSaveConflicts: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreSaveConflictsError)
    }
    /// `NSCoreDataError`.
    public static var coreData: CocoaError.Code { CocoaError.Code(rawValue: NSCoreDataError) }
    /// `NSPersistentStoreOperationError`.
    public static var persistentStoreOperation: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreOperationError)
    }
    /// `NSPersistentStoreOpenError`.
    public static var persistentStoreOpen: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreOpenError) }
    /// `NSPersistentStoreTimeoutError`.
    public static var persistentStoreTimeout: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreTimeoutError)
    }
    /// `NSPersistentStoreUnsupportedRequestTypeError`.
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreUnsupportedRequestTypeError)
    }
    /// `NSPersistentStoreIncompatibleVersionHashError`.
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompatibleVersionHashError)
    }
    /// `NSMigrationError`.
    public static var migration: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationError) }
    /// `NSMigrationConstraintViolationError`.
    public static var migrationConstraintViolation: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationConstraintViolationError)
    }
    /// `NSMigrationCancelledError`.
    public static var migrationCancelled: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationCancelledError) }
    /// `NSMigrationMissingSourceModelError`.
    public static var migrationMissingSourceModel: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationMissingSourceModelError)
    }
    /// `NSMigrationMissingMappingModelError`.
    public static var migrationMissingMappingModel: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationMissingMappingModelError)
    }
    /// `NSMigrationManagerSourceStoreError`.
    public static var migrationManagerSourceStore: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationManagerSourceStoreError)
    }
    /// `NSMigrationManagerDestinationStoreError`.
    public static var migrationManagerDestinationStore: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationManagerDestinationStoreError)
    }
    /// `NSEntityMigrationPolicyError`.
    public static var entityMigrationPolicy: CocoaError.Code { CocoaError.Code(rawValue: NSEntityMigrationPolicyError) }
    /// `NSSQLiteError`.
    public static var sqlite: CocoaError.Code { CocoaError.Code(rawValue: NSSQLiteError) }
    /// `NSInferredMappingModelError`.
    public static var inferredMappingModel: CocoaError.Code { CocoaError.Code(rawValue: NSInferredMappingModelError) }
    /// `NSExternalRecordImportError`.
    public static var externalRecordImport: CocoaError.Code { CocoaError.Code(rawValue: NSExternalRecordImportError) }
    /// `NSPersistentHistoryTokenExpiredError`.
    public static var persistentHistoryTokenExpired: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentHistoryTokenExpiredError)
    }
    /// `NSManagedObjectModelReferenceNotFoundError`.
    public static var managedObjectModelReferenceNotFound: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectModelReferenceNotFoundError)
    }
    /// `NSStagedMigrationFrameworkVersionMismatchError`.
    public static var stagedMigrationFrameworkVersionMismatch: CocoaError.Code {
        CocoaError.Code(rawValue: NSStagedMigrationFrameworkVersionMismatchError)
    }
    /// `NSStagedMigrationBackwardMigrationError`.
    public static var stagedMigrationBackwardMigration: CocoaError.Code {
        CocoaError.Code(rawValue: NSStagedMigrationBackwardMigrationError)
    }
    /// The earlier name of ``managedObjectValidation``.
    public static var managedObjectValidationError: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectValidationError)
    }
    /// The earlier name of ``validationMultipleErrors``.
    public static var validationMultipleErrorsError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationMultipleErrorsError)
    }
    /// The earlier name of ``validationMissingMandatoryProperty``.
    public static var validationMissingMandatoryPropertyError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationMissingMandatoryPropertyError)
    }
    /// The earlier name of ``validationRelationshipLacksMinimumCount``.
    public static var validationRelationshipLacksMinimumCountError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipLacksMinimumCountError)
    }
    /// The earlier name of ``validationRelationshipExceedsMaximumCount``.
    public static var validationRelationshipExceedsMaximumCountError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipExceedsMaximumCountError)
    }
    /// The earlier name of ``validationRelationshipDeniedDelete``.
    public static var validationRelationshipDeniedDeleteError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationRelationshipDeniedDeleteError)
    }
    /// The earlier name of ``validationNumberTooLarge``.
    public static var validationNumberTooLargeError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationNumberTooLargeError)
    }
    /// The earlier name of ``validationNumberTooSmall``.
    public static var validationNumberTooSmallError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationNumberTooSmallError)
    }
    /// The earlier name of ``validationDateTooLate``.
    public static var validationDateTooLateError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationDateTooLateError)
    }
    /// The earlier name of ``validationDateTooSoon``.
    public static var validationDateTooSoonError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationDateTooSoonError)
    }
    /// The earlier name of ``validationInvalidDate``.
    public static var validationInvalidDateError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationInvalidDateError)
    }
    /// The earlier name of ``validationStringTooLong``.
    public static var validationStringTooLongError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringTooLongError)
    }
    /// The earlier name of ``validationStringTooShort``.
    public static var validationStringTooShortError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringTooShortError)
    }
    /// The earlier name of ``validationStringPatternMatching``.
    public static var validationStringPatternMatchingError: CocoaError.Code {
        CocoaError.Code(rawValue: NSValidationStringPatternMatchingError)
    }
    /// The earlier name of ``managedObjectContextLocking``.
    public static var managedObjectContextLockingError: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectContextLockingError)
    }
    /// The earlier name of ``persistentStoreCoordinatorLocking``.
    public static var persistentStoreCoordinatorLockingError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreCoordinatorLockingError)
    }
    /// The earlier name of ``managedObjectReferentialIntegrity``.
    public static var managedObjectReferentialIntegrityError: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectReferentialIntegrityError)
    }
    /// The earlier name of ``managedObjectExternalRelationship``.
    public static var managedObjectExternalRelationshipError: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectExternalRelationshipError)
    }
    /// The earlier name of ``managedObjectMerge``.
    public static var managedObjectMergeError: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectMergeError) }
    /// The earlier name of ``managedObjectConstraintMerge``.
    public static var managedObjectConstraintMergeError: CocoaError.Code {
        CocoaError.Code(rawValue: NSManagedObjectConstraintMergeError)
    }
    /// The earlier name of ``persistentStoreInvalidType``.
    public static var persistentStoreInvalidTypeError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreInvalidTypeError)
    }
    /// The earlier name of ``persistentStoreTypeMismatch``.
    public static var persistentStoreTypeMismatchError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreTypeMismatchError)
    }
    /// The earlier name of ``persistentStoreIncompatibleSchema``.
    public static var persistentStoreIncompatibleSchemaError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompatibleSchemaError)
    }
    /// The earlier name of ``persistentStoreSave``.
    public static var persistentStoreSaveError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreSaveError)
    }
    /// The earlier name of ``persistentStoreIncompleteSave``.
    public static var persistentStoreIncompleteSaveError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompleteSaveError)
    }
    /// The earlier name of ``persistentStoreSaveConflicts``.
    public static var persistentStoreSaveConflictsError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreSaveConflictsError)
    }
    /// The earlier name of ``coreData``.
    public static var coreDataError: CocoaError.Code { CocoaError.Code(rawValue: NSCoreDataError) }
    /// The earlier name of ``persistentStoreOperation``.
    public static var persistentStoreOperationError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreOperationError)
    }
    /// The earlier name of ``persistentStoreOpen``.
    public static var persistentStoreOpenError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreOpenError)
    }
    /// The earlier name of ``persistentStoreTimeout``.
    public static var persistentStoreTimeoutError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreTimeoutError)
    }
    /// The earlier name of ``persistentStoreUnsupportedRequestType``.
    public static var persistentStoreUnsupportedRequestTypeError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreUnsupportedRequestTypeError)
    }
    /// The earlier name of ``persistentStoreIncompatibleVersionHash``.
    public static var persistentStoreIncompatibleVersionHashError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentStoreIncompatibleVersionHashError)
    }
    /// The earlier name of ``migration``.
    public static var migrationError: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationError) }
    /// The earlier name of ``migrationCancelled``.
    public static var migrationCancelledError: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationCancelledError) }
    /// The earlier name of ``migrationMissingSourceModel``.
    public static var migrationMissingSourceModelError: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationMissingSourceModelError)
    }
    /// The earlier name of ``migrationMissingMappingModel``.
    public static var migrationMissingMappingModelError: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationMissingMappingModelError)
    }
    /// The earlier name of ``migrationManagerSourceStore``.
    public static var migrationManagerSourceStoreError: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationManagerSourceStoreError)
    }
    /// The earlier name of ``migrationManagerDestinationStore``.
    public static var migrationManagerDestinationStoreError: CocoaError.Code {
        CocoaError.Code(rawValue: NSMigrationManagerDestinationStoreError)
    }
    /// The earlier name of ``entityMigrationPolicy``.
    public static var entityMigrationPolicyError: CocoaError.Code {
        CocoaError.Code(rawValue: NSEntityMigrationPolicyError)
    }
    /// The earlier name of ``sqlite``.
    public static var sqliteError: CocoaError.Code { CocoaError.Code(rawValue: NSSQLiteError) }
    /// The earlier name of ``inferredMappingModel``.
    public static var inferredMappingModelError: CocoaError.Code {
        CocoaError.Code(rawValue: NSInferredMappingModelError)
    }
    /// The earlier name of ``externalRecordImport``.
    public static var externalRecordImportError: CocoaError.Code {
        CocoaError.Code(rawValue: NSExternalRecordImportError)
    }
    /// The earlier name of ``persistentHistoryTokenExpired``.
    public static var persistentHistoryTokenExpiredError: CocoaError.Code {
        CocoaError.Code(rawValue: NSPersistentHistoryTokenExpiredError)
    }
}

/// The same codes as members of `CocoaError`, which a `catch CocoaError.validationMissingMandatoryProperty`
/// pattern names (Apple declares both); each is the `CocoaError.Code` member of its name.
extension CocoaError {
    /// `NSManagedObjectValidationError`.
    public static var managedObjectValidation: CocoaError.Code { .managedObjectValidation }
    /// `NSManagedObjectConstraintValidationError`.
    public static var managedObjectConstraintValidation: CocoaError.Code { .managedObjectConstraintValidation }
    /// `NSValidationMultipleErrorsError`.
    public static var validationMultipleErrors: CocoaError.Code { .validationMultipleErrors }
    /// `NSValidationMissingMandatoryPropertyError`.
    public static var validationMissingMandatoryProperty: CocoaError.Code { .validationMissingMandatoryProperty }
    /// `NSValidationRelationshipLacksMinimumCountError`.
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code {
        .validationRelationshipLacksMinimumCount
    }
    /// `NSValidationRelationshipExceedsMaximumCountError`.
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code {
        .validationRelationshipExceedsMaximumCount
    }
    /// `NSValidationRelationshipDeniedDeleteError`.
    public static var validationRelationshipDeniedDelete: CocoaError.Code { .validationRelationshipDeniedDelete }
    /// `NSValidationNumberTooLargeError`.
    public static var validationNumberTooLarge: CocoaError.Code { .validationNumberTooLarge }
    /// `NSValidationNumberTooSmallError`.
    public static var validationNumberTooSmall: CocoaError.Code { .validationNumberTooSmall }
    /// `NSValidationDateTooLateError`.
    public static var validationDateTooLate: CocoaError.Code { .validationDateTooLate }
    /// `NSValidationDateTooSoonError`.
    public static var validationDateTooSoon: CocoaError.Code { .validationDateTooSoon }
    /// `NSValidationInvalidDateError`.
    public static var validationInvalidDate: CocoaError.Code { .validationInvalidDate }
    /// `NSValidationStringTooLongError`.
    public static var validationStringTooLong: CocoaError.Code { .validationStringTooLong }
    /// `NSValidationStringTooShortError`.
    public static var validationStringTooShort: CocoaError.Code { .validationStringTooShort }
    /// `NSValidationStringPatternMatchingError`.
    public static var validationStringPatternMatching: CocoaError.Code { .validationStringPatternMatching }
    /// `NSValidationInvalidURIError`.
    public static var validationInvalidURI: CocoaError.Code { .validationInvalidURI }
    /// `NSManagedObjectContextLockingError`.
    public static var managedObjectContextLocking: CocoaError.Code { .managedObjectContextLocking }
    /// `NSPersistentStoreCoordinatorLockingError`.
    public static var persistentStoreCoordinatorLocking: CocoaError.Code { .persistentStoreCoordinatorLocking }
    /// `NSManagedObjectReferentialIntegrityError`.
    public static var managedObjectReferentialIntegrity: CocoaError.Code { .managedObjectReferentialIntegrity }
    /// `NSManagedObjectExternalRelationshipError`.
    public static var managedObjectExternalRelationship: CocoaError.Code { .managedObjectExternalRelationship }
    /// `NSManagedObjectMergeError`.
    public static var managedObjectMerge: CocoaError.Code { .managedObjectMerge }
    /// `NSManagedObjectConstraintMergeError`.
    public static var managedObjectConstraintMerge: CocoaError.Code { .managedObjectConstraintMerge }
    /// `NSPersistentStoreInvalidTypeError`.
    public static var persistentStoreInvalidType: CocoaError.Code { .persistentStoreInvalidType }
    /// `NSPersistentStoreTypeMismatchError`.
    public static var persistentStoreTypeMismatch: CocoaError.Code { .persistentStoreTypeMismatch }
    /// `NSPersistentStoreIncompatibleSchemaError`.
    public static var persistentStoreIncompatibleSchema: CocoaError.Code { .persistentStoreIncompatibleSchema }
    /// `NSPersistentStoreSaveError`.
    public static var persistentStoreSave: CocoaError.Code { .persistentStoreSave }
    /// `NSPersistentStoreIncompleteSaveError`.
    public static var persistentStoreIncompleteSave: CocoaError.Code { .persistentStoreIncompleteSave }
    /// `NSPersistentStoreSaveConflictsError`.
    public static var persistentStoreSaveConflicts: CocoaError.Code { .persistentStoreSaveConflicts }
    /// `NSCoreDataError`.
    public static var coreData: CocoaError.Code { .coreData }
    /// `NSPersistentStoreOperationError`.
    public static var persistentStoreOperation: CocoaError.Code { .persistentStoreOperation }
    /// `NSPersistentStoreOpenError`.
    public static var persistentStoreOpen: CocoaError.Code { .persistentStoreOpen }
    /// `NSPersistentStoreTimeoutError`.
    public static var persistentStoreTimeout: CocoaError.Code { .persistentStoreTimeout }
    /// `NSPersistentStoreUnsupportedRequestTypeError`.
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code { .persistentStoreUnsupportedRequestType }
    /// `NSPersistentStoreIncompatibleVersionHashError`.
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code {
        .persistentStoreIncompatibleVersionHash
    }
    /// `NSMigrationError`.
    public static var migration: CocoaError.Code { .migration }
    /// `NSMigrationConstraintViolationError`.
    public static var migrationConstraintViolation: CocoaError.Code { .migrationConstraintViolation }
    /// `NSMigrationCancelledError`.
    public static var migrationCancelled: CocoaError.Code { .migrationCancelled }
    /// `NSMigrationMissingSourceModelError`.
    public static var migrationMissingSourceModel: CocoaError.Code { .migrationMissingSourceModel }
    /// `NSMigrationMissingMappingModelError`.
    public static var migrationMissingMappingModel: CocoaError.Code { .migrationMissingMappingModel }
    /// `NSMigrationManagerSourceStoreError`.
    public static var migrationManagerSourceStore: CocoaError.Code { .migrationManagerSourceStore }
    /// `NSMigrationManagerDestinationStoreError`.
    public static var migrationManagerDestinationStore: CocoaError.Code { .migrationManagerDestinationStore }
    /// `NSEntityMigrationPolicyError`.
    public static var entityMigrationPolicy: CocoaError.Code { .entityMigrationPolicy }
    /// `NSSQLiteError`.
    public static var sqlite: CocoaError.Code { .sqlite }
    /// `NSInferredMappingModelError`.
    public static var inferredMappingModel: CocoaError.Code { .inferredMappingModel }
    /// `NSExternalRecordImportError`.
    public static var externalRecordImport: CocoaError.Code { .externalRecordImport }
    /// `NSPersistentHistoryTokenExpiredError`.
    public static var persistentHistoryTokenExpired: CocoaError.Code { .persistentHistoryTokenExpired }
    /// `NSManagedObjectModelReferenceNotFoundError`.
    public static var managedObjectModelReferenceNotFound: CocoaError.Code { .managedObjectModelReferenceNotFound }
    /// `NSStagedMigrationFrameworkVersionMismatchError`.
    public static var stagedMigrationFrameworkVersionMismatch: CocoaError.Code {
        .stagedMigrationFrameworkVersionMismatch
    }
    /// `NSStagedMigrationBackwardMigrationError`.
    public static var stagedMigrationBackwardMigration: CocoaError.Code { .stagedMigrationBackwardMigration }
}
