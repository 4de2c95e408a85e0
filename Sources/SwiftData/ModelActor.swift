import Dispatch
import OpenCoreData

/// What runs a model actor's code: an executor with the model context the actor uses.
///
/// Related documentation: SwiftData, `ModelExecutor`.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context the actor's code uses.
    var modelContext: ModelContext { get }
}

/// A model executor that runs one job at a time, so the context is never used by two at once.
///
/// Related documentation: SwiftData, `SerialModelExecutor`.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// The executor `@ModelActor` gives an actor: its jobs run one at a time, in order, on a serial
/// dispatch queue of its own, with `modelContext`.
///
/// Related documentation: SwiftData, `DefaultSerialModelExecutor`.
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
    /// The context the actor's code uses.
    public let modelContext: ModelContext
    private let queue = DispatchQueue(label: "SwiftData.DefaultSerialModelExecutor")

    /// An executor whose jobs use `modelContext`.
    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
    }

    /// Runs `job` after the jobs enqueued before it, on the executor's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// The executor as the runtime refers to it.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// An actor whose code runs on a model executor and uses its context: what `@ModelActor` makes
/// of an actor, for work on models away from the main actor.
///
/// Related documentation: SwiftData, `ModelActor`.
public protocol ModelActor: Actor {
    /// The executor the actor's code runs on.
    nonisolated var modelExecutor: any ModelExecutor { get }
    /// The container of the actor's context.
    nonisolated var modelContainer: ModelContainer { get }
}

extension ModelActor {
    /// The actor's executor: its model executor, which must be serial (as
    /// `DefaultSerialModelExecutor` is).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        guard let serial = modelExecutor as? any SerialModelExecutor else {
            preconditionFailure("a model actor's executor must be a SerialModelExecutor")
        }
        return serial.asUnownedSerialExecutor()
    }

    /// The context the actor's code uses.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The model of `id` in the actor's context, as `T`; `nil` when the context has none of that
    /// class or the store has no such model.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        modelContext.existingModel(for: id) as? T
    }
}
