import CoreData
import Foundation
import Testing

/// Names real Core Data code uses, spelled and valued as Apple's headers and Swift overlay spell
/// them: `CoreDataErrors.h`, the `CocoaError.Code` members, the coordinator's
/// store-change notifications, the context's object-ID notifications, the typed store-type API of
/// macOS 12 / iOS 15, and `registerStoreClass(_:forStoreType:)` / `registeredStoreTypes`.
@Suite("Apple's names: error codes, notifications, typed store API")
struct AppleNamesTests {
    let directory = TemporaryDirectory()

    /// Every constant of `CoreDataErrors.h` (macOS 14 SDK) with its value.
    @Test func everyErrorConstantOfCoreDataErrorsH() {
        let constants: [(Int, Int)] = [
            (NSManagedObjectValidationError, 1550), (NSManagedObjectConstraintValidationError, 1551),
            (NSValidationMultipleErrorsError, 1560), (NSValidationMissingMandatoryPropertyError, 1570),
            (NSValidationRelationshipLacksMinimumCountError, 1580),
            (NSValidationRelationshipExceedsMaximumCountError, 1590),
            (NSValidationRelationshipDeniedDeleteError, 1600), (NSValidationNumberTooLargeError, 1610),
            (NSValidationNumberTooSmallError, 1620), (NSValidationDateTooLateError, 1630),
            (NSValidationDateTooSoonError, 1640), (NSValidationInvalidDateError, 1650),
            (NSValidationStringTooLongError, 1660), (NSValidationStringTooShortError, 1670),
            (NSValidationStringPatternMatchingError, 1680), (NSValidationInvalidURIError, 1690),
            (NSManagedObjectContextLockingError, 132_000), (NSPersistentStoreCoordinatorLockingError, 132_010),
            (NSManagedObjectReferentialIntegrityError, 133_000), (NSManagedObjectExternalRelationshipError, 133_010),
            (NSManagedObjectMergeError, 133_020), (NSManagedObjectConstraintMergeError, 133_021),
            (NSPersistentStoreInvalidTypeError, 134_000), (NSPersistentStoreTypeMismatchError, 134_010),
            (NSPersistentStoreIncompatibleSchemaError, 134_020), (NSPersistentStoreSaveError, 134_030),
            (NSPersistentStoreIncompleteSaveError, 134_040), (NSPersistentStoreSaveConflictsError, 134_050),
            (NSCoreDataError, 134_060), (NSPersistentStoreOperationError, 134_070),
            (NSPersistentStoreOpenError, 134_080), (NSPersistentStoreTimeoutError, 134_090),
            (NSPersistentStoreUnsupportedRequestTypeError, 134_091),
            (NSPersistentStoreIncompatibleVersionHashError, 134_100), (NSMigrationError, 134_110),
            (NSMigrationConstraintViolationError, 134_111), (NSMigrationCancelledError, 134_120),
            (NSMigrationMissingSourceModelError, 134_130), (NSMigrationMissingMappingModelError, 134_140),
            (NSMigrationManagerSourceStoreError, 134_150), (NSMigrationManagerDestinationStoreError, 134_160),
            (NSEntityMigrationPolicyError, 134_170), (NSSQLiteError, 134_180), (NSInferredMappingModelError, 134_190),
            (NSExternalRecordImportError, 134_200), (NSPersistentHistoryTokenExpiredError, 134_301),
            (NSManagedObjectModelReferenceNotFoundError, 134_504),
            (NSStagedMigrationFrameworkVersionMismatchError, 134_505),
            (NSStagedMigrationBackwardMigrationError, 134_506),
        ]
        for (constant, value) in constants { #expect(constant == value) }
        #expect(CocoaError.Code.persistentStoreIncompatibleVersionHash.rawValue == 134_100)
        #expect(CocoaError.Code.validationMissingMandatoryPropertyError.rawValue == 1570)
        #expect(CocoaError.managedObjectConstraintMerge.rawValue == 133_021)
        #expect(CocoaError.Code.sqlite.rawValue == NSSQLiteError)
    }

    /// The usual way code tells a validation failure: `catch let error as CocoaError where
    /// error.code == .validationMissingMandatoryProperty`.
    @Test func aValidationErrorMatchesItsCocoaErrorCode() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        context.employee("Ada").setValue(nil, forKey: "name")
        do {
            try context.save()
            Issue.record("the save succeeded without a mandatory name")
        } catch let error as CocoaError where error.code == .validationMissingMandatoryProperty {
            #expect(error.errorCode == 1570)
        }
    }

    /// NSPersistentStoreCoordinator, "Notifications": stores-did-change after a store is added or
    /// removed (added/removed keys), will-remove-store before a removal, with the store as object.
    @Test func storeChangeNotifications() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let seen = Collector<String>()
        let center = NotificationCenter.default
        let tokens = [
            center.addObserver(forName: .NSPersistentStoreCoordinatorStoresDidChange, object: coordinator, queue: nil) {
                let added = ($0.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.count ?? 0
                let removed = ($0.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.count ?? 0
                seen.append("didChange +\(added) -\(removed)")
            },
            center.addObserver(
                forName: NSPersistentStoreCoordinator.willRemoveStoreNotification, object: nil, queue: nil
            ) { note in
                if (note.object as? NSPersistentStore)?.persistentStoreCoordinator === coordinator {
                    seen.append("willRemove")
                }
            },
        ]
        defer { tokens.forEach(center.removeObserver) }
        let store = try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        try coordinator.remove(store)
        #expect(seen.values == ["didChange +1 -0", "willRemove", "didChange +0 -1"])
    }

    /// `NSManagedObjectContextDidSaveObjectIDs` after a save, and
    /// `NSManagedObjectContextDidMergeChangesObjectIDs` after a merge, each with object-ID sets.
    @Test func objectIDNotificationsOfSaveAndMerge() throws {
        let writer = try sqliteStack(directory.file("Company.sqlite"))
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = writer.persistentStoreCoordinator
        let written = NotificationRecorder(
            [.NSManagedObjectContextDidSaveObjectIDs, .NSManagedObjectContextDidSave], object: writer)
        let read = NotificationRecorder([.NSManagedObjectContextDidMergeChangesObjectIDs], object: reader)
        let ada = writer.employee("Ada")
        try writer.save()
        let saved = written.notes.first { $0.name == NSManagedObjectContext.didSaveObjectIDsNotification }
        #expect(
            saved?.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue]
                as? Set<NSManagedObjectID>
                == [ada.objectID])
        reader.mergeChanges(
            fromContextDidSave: try #require(written.notes.first { $0.name == .NSManagedObjectContextDidSave }))
        let merged = read.notes.first { $0.name == NSManagedObjectContext.didMergeChangesObjectIDsNotification }
        #expect(merged?.userInfo?["inserted_objectIDs"] as? Set<NSManagedObjectID> == [ada.objectID])
        // Apple's global names of the same keys (NSManagedObjectContext.h), which code written
        // before the `NotificationKey` struct uses.
        #expect(saved?.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> == [ada.objectID])
        #expect(merged?.userInfo?[NSRefreshedObjectIDsKey] is Set<NSManagedObjectID>)
        #expect(
            [NSUpdatedObjectIDsKey, NSDeletedObjectIDsKey, NSInvalidatedObjectIDsKey] == [
                "updated_objectIDs", "deleted_objectIDs", "invalidated_objectIDs",
            ])
    }

    /// The typed API of macOS 12 / iOS 15 and Apple's `registerStoreClass(_:forStoreType:)`;
    /// `registeredStoreTypes` lists the built-in types with their classes.
    @Test func typedStoreTypeAPIAndRegistration() throws {
        let url = directory.file("Company.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        let types = NSPersistentStoreCoordinator.registeredStoreTypes
        #expect(types[NSSQLiteStoreType] != nil && types[NSInMemoryStoreType] != nil)
        #expect(types[NSSQLiteStoreType]?.nonretainedObjectValue is NSPersistentStore.Type)
        NSPersistentStoreCoordinator.registerStoreClass(
            NSIncrementalStore.self, type: NSPersistentStore.StoreType(rawValue: "AppleNamesTests.Typed"))
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes["AppleNamesTests.Typed"] != nil)
        NSPersistentStoreCoordinator.registerStoreClass(nil, forStoreType: "AppleNamesTests.Typed")
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes["AppleNamesTests.Typed"] == nil)
        let concurrency: NSManagedObjectContextConcurrencyType = .privateQueueConcurrencyType
        #expect(NSManagedObjectContext(concurrencyType: concurrency).concurrencyType == .privateQueueConcurrencyType)
        #expect(NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue == "NSSecureUnarchiveFromData")
    }

    /// The class method `setMetadata(_:forPersistentStoreOfType:at:options:)` writes a closed
    /// store's metadata, keeping its type and UUID.
    @Test func setMetadataOnAClosedStore() throws {
        let url = directory.file("Company.sqlite")
        do { _ = try sqliteStack(url) }
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        var metadata = before
        metadata["AppVersion"] = "2.1"
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(after["AppVersion"] as? String == "2.1")
        #expect(after[NSStoreUUIDKey] as? String == before[NSStoreUUIDKey] as? String)
        #expect(try sqliteStack(url).persistentStoreCoordinator?.persistentStores.count == 1)
        try NSPersistentStoreCoordinator.setMetadata(["Other": 1], type: .sqlite, at: url)
        let typed = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(typed["Other"] as? Int == 1 && typed["AppVersion"] == nil)
        #expect(typed[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(typed[NSStoreUUIDKey] as? String == before[NSStoreUUIDKey] as? String)
    }

    /// Regression: metadata set with `setMetadata(_:for:)` is written by the next save
    /// even when no object changed ("the metadata is saved … when the store is next saved").
    @Test func metadataIsSavedWithoutObjectChanges() throws {
        let url = directory.file("Company.sqlite")
        let context = try sqliteStack(url)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first)
        var metadata = coordinator.metadata(for: store)
        metadata["LastSync"] = "2026-11-23"
        coordinator.setMetadata(metadata, for: store)
        #expect(!context.hasChanges)
        try context.save()
        let written = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(written["LastSync"] as? String == "2026-11-23")
    }
}
