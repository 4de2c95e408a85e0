/// Makes a class a persistent model: its stored properties are saved by a ``ModelContext``, and
/// the class conforms to ``PersistentModel`` and `Observable`.
///
/// Related documentation: SwiftData, `Model()`.
@attached(
    member,
    names: named(_$backingData), named(persistentBackingData), named(schemaMetadata), named(init(backingData:)),
    named(_$observationRegistrar), named(_SwiftDataNoType))
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, Observable)
public macro Model() = #externalMacro(module: "SwiftDataMacros", type: "ModelMacro")

/// Keeps a property of a model class out of its store: `@Model` leaves it a stored property.
///
/// Related documentation: SwiftData, `Transient()`.
@attached(peer)
public macro Transient() = #externalMacro(module: "SwiftDataMacros", type: "TransientMacro")

/// What `@Model` puts on each persisted property: its value lives in the model's backing data.
/// Not meant to be written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty() = #externalMacro(module: "SwiftDataMacros", type: "PersistedPropertyMacro")

/// Options of a persisted property: `.unique` (one model per value: inserting another with the
/// same value updates the stored one), `.externalStorage`, `.preserveValueOnDeletion`,
/// `.ephemeral`, `.spotlight`, `.allowsCloudEncryption`; `originalName` (the property's name in
/// the previous version of the schema, for migration); `hashModifier` (a change of version hash
/// without a change of property).
///
/// Related documentation: SwiftData, `Attribute(_:originalName:hashModifier:)`.
@attached(peer)
public macro Attribute(
    _ options: Schema.Attribute.Option..., originalName: String? = nil, hashModifier: String? = nil
) = #externalMacro(module: "SwiftDataMacros", type: "PropertyOptionsMacro")

/// Options of a relationship (a property holding a model or an array of models): `deleteRule`
/// (what deleting the model does to the related ones; `.nullify` by default),
/// `minimumModelCount` and `maximumModelCount` (0 for no bound), `originalName` (the name in the
/// previous version of the schema), `inverse` (the key path of the property at the other end) and
/// `hashModifier`.
///
/// Related documentation: SwiftData,
/// `Relationship(_:deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:hashModifier:)`.
@attached(peer)
public macro Relationship(
    _ options: Schema.Relationship.Option..., deleteRule: Schema.Relationship.DeleteRule = .nullify,
    minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil,
    inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) = #externalMacro(module: "SwiftDataMacros", type: "PropertyOptionsMacro")

/// Makes an actor a ``ModelActor``: its code runs on a ``DefaultSerialModelExecutor`` with a new
/// context of the container given to its `init(modelContainer:)`.
///
/// Related documentation: SwiftData, `ModelActor()`.
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "SwiftDataMacros", type: "ModelActorMacro")

/// Uniqueness constraints of a model class, each a list of its properties whose values together
/// are unique among the class's models: inserting a model with the values of a stored one updates
/// the stored one. Written in the class's body.
///
/// Related documentation: SwiftData, `Unique(_:)`.
@freestanding(declaration, names: named(_$uniquenessConstraints))
public macro Unique<T: PersistentModel>(_ constraints: [PartialKeyPath<T>]...) =
    #externalMacro(module: "SwiftDataMacros", type: "KeyPathListMacro")

/// Binary indexes of a model class's store table, each on a list of its properties, for the
/// fetches that filter or sort by them. Written in the class's body.
///
/// Related documentation: SwiftData, `Index(_:)`.
@freestanding(declaration, names: named(_$indexes), named(_$rTreeIndexes))
public macro Index<T: PersistentModel>(_ indices: [PartialKeyPath<T>]...) =
    #externalMacro(module: "SwiftDataMacros", type: "KeyPathListMacro")

/// Indexes of a model class's store table, each binary (`.binary([\.a, \.b])`) or R-tree
/// (`.rtree([\.x, \.y])`, for range queries over several numbers). Written in the class's body.
///
/// Related documentation: SwiftData, `Index(_:)`.
@freestanding(declaration, names: named(_$indexes), named(_$rTreeIndexes))
public macro Index<T: PersistentModel>(_ indices: Schema.Index<T>.Types<T>...) =
    #externalMacro(module: "SwiftDataMacros", type: "KeyPathListMacro")
