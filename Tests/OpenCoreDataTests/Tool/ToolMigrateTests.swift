import Foundation
import Testing

/// `coredata migrate STORE --model NEW [--dry-run]`: says which version wrote the
/// store and what each entity's migration changes, then migrates in place; `--dry-run` changes
/// nothing; what cannot be migrated is one line on standard error, exit 1, the store unchanged.
@Suite("coredata tool: migrate")
struct ToolMigrateTests {
    let directory = TemporaryDirectory()

    @Test func migrateSaysWhatItDoesThenMigratesInPlace() throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        let version2 = models.appendingPathComponent("CoreDataMigration_Example 2.xcdatamodel")
        let original = try Data(contentsOf: store)
        // --dry-run: what would change, and nothing changed.
        let dry = try Tool.run(["migrate", store.path, "--model", version2.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.output.contains("(the model cached in the store is used)"))
        #expect(dry.output.contains("  Post: hexColor ← color"))
        #expect(dry.output.contains("Dry run:            the store was not changed"))
        #expect(try Data(contentsOf: store) == original)
        // Migrating: in place; the model then matches the store, and a second run has nothing to do.
        let migrated = try Tool.run(["migrate", store.path, "--model", version2.path])
        #expect(migrated.status == 0, "\(migrated.error)")
        #expect(migrated.output.contains("Migrated:           in place"))
        let info = try Tool.run(["info", store.path, "--model", version2.path])
        #expect(info.output.contains("matches the store") && !info.output.contains("Migration:"))
        let again = try Tool.run(["migrate", store.path, "--model", version2.path])
        #expect(again.status == 0 && again.output.contains("nothing to migrate"))
        // To the current version (4): the version that wrote it now is version 2.
        let current = try Tool.run(["migrate", store.path, "--model", models.path, "--dry-run"])
        #expect(
            current.output.contains(
                "Written by:         CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 2.xcdatamodel"))
        #expect(current.output.contains("  Section: new entity"))
    }

    @Test func whatCannotBeMigratedIsOneLineAndTheStoreStays() throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let original = try Data(contentsOf: store)
        let changed = try Tool.wiboscoModelWithColorAsInteger(in: directory)
        let refused = try Tool.run(["migrate", store.path, "--model", changed.path])
        #expect(refused.status == 1)
        #expect(refused.error.contains("the store was not migrated"))
        #expect(refused.error.contains("Source and destination attribute types are incompatible"))
        #expect(refused.error.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: store) == original)
        let mapping = try Tool.run(["migrate", store.path, "--model", changed.path, "--mapping", "V1toV2.cdm"])
        #expect(mapping.status == 2)
        #expect(mapping.error.contains("V1toV2.cdm: no such file"))
    }

    @Test func migrateThroughAMappingModelSaysEachMappingThenReplacesTheStore() throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V2.sqlite", root: root, to: directory)
        let sample = root.appendingPathComponent("stores/coredataplus-samplemodel/SampleModel")
        let models = sample.appendingPathComponent("SampleModel.xcdatamodeld")
        let version3 = models.appendingPathComponent("SampleModel3.xcdatamodel")
        let mapping = sample.appendingPathComponent("MappingModels/V2toV3.xcmappingmodel")
        let dry = try Tool.run([
            "migrate", store.path, "--model", version3.path, "--mapping", mapping.path, "--dry-run",
        ])
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.output.contains("Mapping model:      5 entity mappings"))
        #expect(dry.output.contains("  CarToCar: Car → Car, policy REPLACE_AT_RUNTIME.V2to3MakerPolicy"))
        #expect(dry.output.contains("    numberPlate = $source.numberPlate"))
        // The policy is the app's code: this tool does not have it, so the migration stops and
        // the store stays as it was.
        let original = try Data(contentsOf: store)
        let refused = try Tool.run(["migrate", store.path, "--model", version3.path, "--mapping", mapping.path])
        #expect(refused.status == 1)
        #expect(refused.error.contains("V2to3MakerPolicy"))
        #expect(try Data(contentsOf: store) == original)
        // A mapping model without a policy migrates: the Moody 2 → 3 mapping.
        let moody = try FixtureStores.copy("objcio-moody-migrations/stores/Moody 2.moody", root: root, to: directory)
        let moodyModels = root.appendingPathComponent("stores/objcio-moody-migrations/Moody.xcdatamodeld")
        let moodyMapping = root.appendingPathComponent(
            "stores/objcio-moody-migrations/mappings/Moody 2-Moody 3.xcmappingmodel")
        let migrated = try Tool.run([
            "migrate", moody.path, "--model", moodyModels.appendingPathComponent("Moody 3.xcdatamodel").path,
            "--mapping",
            moodyMapping.path,
        ])
        #expect(migrated.status == 0, "\(migrated.error)")
        #expect(migrated.output.contains("Migrated:           through the mapping model"))
        let info = try Tool.run([
            "info", moody.path, "--model", moodyModels.appendingPathComponent("Moody 3.xcdatamodel").path,
        ])
        #expect(info.output.contains("matches the store"))
        // The store keeps its UUID, the app's metadata key and every object.
        #expect(info.output.contains("UUID:               374C5961-3E41-43E5-915C-383EA914074C"))
        #expect(info.output.contains("io.objc.Moody.CloudKitUserID"))
        #expect(info.output.contains("  Mood                          4"))
        #expect(info.output.contains("  Country : GeographicRegion    3"))
        #expect(info.output.contains("  Continent : GeographicRegion  2"))
    }
}
