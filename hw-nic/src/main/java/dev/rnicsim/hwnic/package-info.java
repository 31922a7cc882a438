/**
 * The real-hardware backend of verbs-api: rdma-core's libibverbs through java.lang.foreign (no JNI, no C code of
 * ours). Two layers, as jextract's clang binding has them: {@link dev.rnicsim.hwnic.IbvStructs},
 * {@link dev.rnicsim.hwnic.Ibv} and {@link dev.rnicsim.hwnic.Libibverbs} are the raw binding (struct layouts,
 * constants, downcall handles with errno captured), used only by this package; {@code Rdma*} classes implement the
 * verbs-api interfaces over it, and {@link dev.rnicsim.hwnic.NativeHostMemory} gives them page-aligned native
 * buffers.
 *
 * <p>Devices are named {@code rdma:NAME} ({@link dev.rnicsim.hwnic.RdmaVerbsProvider}). The JVM needs
 * {@code --enable-native-access=ALL-UNNAMED}, or it warns once on the first native call.
 */
package dev.rnicsim.hwnic;
