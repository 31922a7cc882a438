package dev.rnicsim.hwnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.PaddingLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layout check: generates a C program that prints {@code sizeof} and {@code offsetof} of every struct and
 * member the Java layouts declare ({@link IbvStructs}, {@code struct rlimit}), and the value of every constant the
 * binding uses ({@link Ibv}, {@link Libc}, and the verbs-api enums whose numbers go to the C API), compiles it with
 * gcc against the installed headers ({@code <infiniband/verbs.h>}, {@code <sys/mman.h>}, ...), runs it, and compares
 * every line with the Java side. Skipped, with the reason, when gcc or the libibverbs headers are missing; the
 * program needs no libibverbs at run time.
 */
class LayoutCheckTest
{
    private static final Pattern UNDECLARED = Pattern.compile("[‘'`]([A-Za-z_][A-Za-z0-9_]*)[’'] undeclared");

    @TempDir
    Path dir;

    /**
     * One thing to compare: a C expression and the value Java holds for it.
     *
     * @param optional true for a verbs-api constant that a header older than it may lack (the binding does not
     *                 depend on it); a missing one is reported, not failed.
     */
    private record Check(String label, String cExpression, long javaValue, boolean optional)
    {
        Check(final String label, final String cExpression, final long javaValue)
        {
            this(label, cExpression, javaValue, false);
        }
    }

    @Test
    void shouldMatchEverySizeOffsetAndConstantWithTheInstalledHeaders() throws Exception
    {
        final CProgram gcc = CProgram.orSkip(dir);

        final List<Check> checks = new ArrayList<>();
        for (final IbvStructs.CType t : IbvStructs.ALL)
        {
            structChecks(checks, t.cName(), t.layout());
        }
        structChecks(checks, "struct rlimit", Libc.RLIMIT);
        structChecks(checks, "struct ibv_srq_attr", SrqVerbs.IBV_SRQ_ATTR);
        structChecks(checks, "struct ibv_srq_init_attr", SrqVerbs.IBV_SRQ_INIT_ATTR);
        structChecks(checks, "struct ibv_rx_hash_conf", ExtendedQpVerbs.IBV_RX_HASH_CONF);
        structChecks(checks, "struct ibv_qp_init_attr_ex", ExtendedQpVerbs.IBV_QP_INIT_ATTR_EX);
        structChecks(checks, "struct ibv_xrcd_init_attr", XrcVerbs.IBV_XRCD_INIT_ATTR);
        structChecks(checks, "struct ibv_xrcd", XrcVerbs.IBV_XRCD);
        structChecks(checks, "struct ibv_tm_cap", XrcVerbs.IBV_TM_CAP);
        structChecks(checks, "struct ibv_srq_init_attr_ex", XrcVerbs.IBV_SRQ_INIT_ATTR_EX);
        constantChecks(checks);

        CProgram.Run compile = gcc.compile("layout_check", program(checks));
        final List<String> absent = new ArrayList<>();
        if (compile.exit() != 0)
        {
            // verbs-api constants newer than the installed rdma-core (e.g. IBV_ACCESS_FLUSH_* since rdma-core 45).
            final Matcher m = UNDECLARED.matcher(compile.output());
            while (m.find())
            {
                absent.add(m.group(1));
            }
            final boolean onlyOptional = !absent.isEmpty() && checks.stream().filter(x -> absent.contains(
                x.cExpression())).allMatch(Check::optional);
            if (onlyOptional)
            {
                checks.removeIf(x -> absent.contains(x.cExpression()));
                System.out.println("layout check: not in the installed headers (newer rdma-core), not compared: "
                    + absent);
                compile = gcc.compile("layout_check", program(checks));
            }
        }
        assertThat(compile.exit()).as("gcc compiles the generated program (a member or constant the Java side names "
            + "does not exist in the installed headers):%n%s", compile.output()).isZero();
        final CProgram.Run result = gcc.execute("layout_check");
        assertThat(result.exit()).as("the check program runs: %s", result.output()).isZero();

        final Map<String, Long> cValues = new LinkedHashMap<>();
        for (final String line : result.output().split("\n"))
        {
            final int tab = line.lastIndexOf('\t');
            if (tab > 0)
            {
                cValues.put(line.substring(0, tab), Long.parseLong(line.substring(tab + 1).strip()));
            }
        }
        final List<String> mismatches = new ArrayList<>();
        for (final Check c : checks)
        {
            final Long v = cValues.get(c.label());
            if (v == null || v != c.javaValue())
            {
                mismatches.add(c.label() + ": C " + v + ", Java " + c.javaValue());
            }
        }
        System.out.println("layout check: " + checks.size() + " sizes, offsets and constants compared with gcc "
            + "against the installed headers; " + mismatches.size() + " mismatches");
        assertThat(mismatches).as("Java layouts and constants that differ from the C headers").isEmpty();
        assertThat(checks.size()).isGreaterThan(500);
    }

    private static void structChecks(final List<Check> checks, final String cType, final GroupLayout layout)
    {
        checks.add(new Check("sizeof(" + cType + ")", "sizeof(" + cType + ")", layout.byteSize()));
        members(checks, cType, layout, layout, new ArrayList<>(), "");
    }

    /** Every named member, recursively; members of {@code anon_} groups are named without that group. */
    private static void members(final List<Check> checks, final String cType, final GroupLayout root,
        final GroupLayout group, final List<PathElement> javaPath, final String cPrefix)
    {
        for (final MemoryLayout m : group.memberLayouts())
        {
            if (m instanceof PaddingLayout || m.name().isEmpty())
            {
                continue;
            }
            final String name = m.name().get();
            final List<PathElement> path = new ArrayList<>(javaPath);
            path.add(PathElement.groupElement(name));
            if (name.startsWith("anon_"))
            {
                members(checks, cType, root, (GroupLayout)m, path, cPrefix);
                continue;
            }
            final String member = cPrefix + name;
            final long offset = root.byteOffset(path.toArray(PathElement[]::new));
            checks.add(new Check("offsetof(" + cType + ", " + member + ")", "offsetof(" + cType + ", " + member + ")",
                offset));
            checks.add(new Check("sizeof(" + cType + "." + member + ")", "sizeof(((" + cType + " *)0)->" + member + ")",
                m.byteSize()));
            if (m instanceof GroupLayout g)
            {
                members(checks, cType, root, g, path, member + ".");
            }
        }
    }

    private static void constantChecks(final List<Check> checks) throws IllegalAccessException
    {
        staticInts(checks, Ibv.class);
        staticInts(checks, Libc.class);
        constant(checks, "IBV_XRCD_INIT_ATTR_FD", XrcVerbs.IBV_XRCD_INIT_ATTR_FD);
        constant(checks, "IBV_XRCD_INIT_ATTR_OFLAGS", XrcVerbs.IBV_XRCD_INIT_ATTR_OFLAGS);
        constant(checks, "IBV_SRQ_INIT_ATTR_TYPE", XrcVerbs.IBV_SRQ_INIT_ATTR_TYPE);
        constant(checks, "IBV_SRQ_INIT_ATTR_PD", XrcVerbs.IBV_SRQ_INIT_ATTR_PD);
        constant(checks, "IBV_SRQ_INIT_ATTR_XRCD", XrcVerbs.IBV_SRQ_INIT_ATTR_XRCD);
        constant(checks, "IBV_SRQ_INIT_ATTR_CQ", XrcVerbs.IBV_SRQ_INIT_ATTR_CQ);
        constant(checks, "IBV_SRQT_XRC", XrcVerbs.IBV_SRQT_XRC);
        constant(checks, "IBV_QP_INIT_ATTR_XRCD", ExtendedQpVerbs.IBV_QP_INIT_ATTR_XRCD);
        constant(checks, "O_CREAT", RdmaXrcd.O_CREAT);
        for (final Access a : Access.values())
        {
            apiConstant(checks, "IBV_ACCESS_" + a.name(), a.bit());
        }
        for (final WcStatus s : WcStatus.values())
        {
            if (s != WcStatus.UNKNOWN)
            {
                apiConstant(checks, s.cName(), s.code());
            }
        }
        for (final WcOpcode o : WcOpcode.values())
        {
            if (o != WcOpcode.REG_MR)
            {
                apiConstant(checks, "IBV_WC_" + o.name(), o.code());
            }
        }
        for (final WrOpcode o : WrOpcode.values())
        {
            if (o != WrOpcode.REG_MR)
            {
                apiConstant(checks, "IBV_WR_" + o.name(), o.code());
            }
        }
        for (final SendFlag f : SendFlag.values())
        {
            apiConstant(checks, "IBV_SEND_" + f.name(), f.bit());
        }
        for (final QpType t : QpType.values())
        {
            apiConstant(checks, "IBV_QPT_" + t.name(), t.code());
        }
        for (final QpState s : QpState.values())
        {
            apiConstant(checks, "IBV_QPS_" + s.name(), s.ordinal());
        }
        for (final MwType t : MwType.values())
        {
            apiConstant(checks, "IBV_MW_" + t.name(), t.code());
        }
        for (final AtomicCap c : AtomicCap.values())
        {
            apiConstant(checks, "IBV_ATOMIC_" + c.name(), c.code());
        }
        for (final ReregFlag f : ReregFlag.values())
        {
            apiConstant(checks, "IBV_REREG_MR_" + f.name(), f.bit());
        }
        for (final DeviceCap c : DeviceCap.values())
        {
            apiConstant(checks, "IBV_DEVICE_" + c.name(), c.bit());
        }
        apiConstant(checks, "IBV_REREG_MR_ERR_INPUT", ReregException.ERR_INPUT);
        apiConstant(checks, "IBV_REREG_MR_ERR_CMD", ReregException.ERR_CMD);
        apiConstant(checks, "IBV_ODP_SUPPORT", OdpCaps.SUPPORT);
        apiConstant(checks, "IBV_ODP_SUPPORT_IMPLICIT", OdpCaps.SUPPORT_IMPLICIT);
        apiConstant(checks, "IBV_ODP_SUPPORT_SEND", OdpCaps.SEND);
        apiConstant(checks, "IBV_ODP_SUPPORT_RECV", OdpCaps.RECV);
        apiConstant(checks, "IBV_ODP_SUPPORT_WRITE", OdpCaps.WRITE);
        apiConstant(checks, "IBV_ODP_SUPPORT_READ", OdpCaps.READ);
        apiConstant(checks, "IBV_ODP_SUPPORT_ATOMIC", OdpCaps.ATOMIC);
        apiConstant(checks, "IBV_ODP_SUPPORT_SRQ_RECV", OdpCaps.SRQ_RECV);
        constant(checks, "IBV_SYSFS_NAME_MAX", IbvStructs.IBV_SYSFS_NAME_MAX);
        constant(checks, "IBV_SYSFS_PATH_MAX", IbvStructs.IBV_SYSFS_PATH_MAX);
        constant(checks, "sizeof(pthread_mutex_t)", IbvStructs.PTHREAD_MUTEX_BYTES);
        constant(checks, "sizeof(pthread_cond_t)", IbvStructs.PTHREAD_COND_BYTES);
        constant(checks, "(long long)(intptr_t)__VERBS_ABI_IS_EXTENDED", Downcalls.VERBS_ABI_IS_EXTENDED);
        constant(checks, "IBV_SRQ_MAX_WR", SrqVerbs.IBV_SRQ_MAX_WR);
        constant(checks, "IBV_QP_INIT_ATTR_PD", ExtendedQpVerbs.IBV_QP_INIT_ATTR_PD);
        constant(checks, "IBV_QP_INIT_ATTR_SEND_OPS_FLAGS", ExtendedQpVerbs.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
        constant(checks, "IBV_QP_EX_WITH_RDMA_WRITE", ExtendedQpVerbs.IBV_QP_EX_WITH_RDMA_WRITE);
        constant(checks, "IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM", ExtendedQpVerbs.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
        constant(checks, "IBV_QP_EX_WITH_SEND", ExtendedQpVerbs.IBV_QP_EX_WITH_SEND);
        constant(checks, "IBV_QP_EX_WITH_SEND_WITH_IMM", ExtendedQpVerbs.IBV_QP_EX_WITH_SEND_WITH_IMM);
        constant(checks, "IBV_QP_EX_WITH_RDMA_READ", ExtendedQpVerbs.IBV_QP_EX_WITH_RDMA_READ);
        constant(checks, "IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP", ExtendedQpVerbs.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
        constant(checks, "IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD", ExtendedQpVerbs.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
        constant(checks, "IBV_QP_EX_WITH_LOCAL_INV", ExtendedQpVerbs.IBV_QP_EX_WITH_LOCAL_INV);
        constant(checks, "IBV_QP_EX_WITH_BIND_MW", ExtendedQpVerbs.IBV_QP_EX_WITH_BIND_MW);
        constant(checks, "IBV_QP_EX_WITH_SEND_WITH_INV", ExtendedQpVerbs.IBV_QP_EX_WITH_SEND_WITH_INV);
        constant(checks, "IBV_SRQ_LIMIT", SrqVerbs.IBV_SRQ_LIMIT);
        constant(checks, "offsetof(struct ibv_context, ops.post_srq_recv)", SrqVerbs.CONTEXT_OPS_POST_SRQ_RECV);
        constant(checks, "sizeof(struct ibv_gid_entry)", DeviceQueryVerbs.GID_ENTRY_BYTES);
        constant(checks, "offsetof(struct ibv_gid_entry, gid_index)", DeviceQueryVerbs.GID_ENTRY_GID_INDEX);
        constant(checks, "offsetof(struct ibv_gid_entry, port_num)", DeviceQueryVerbs.GID_ENTRY_PORT_NUM);
    }

    /** Every static final int or long of the class whose name is a C name (upper case, starting with a letter). */
    private static void staticInts(final List<Check> checks, final Class<?> c) throws IllegalAccessException
    {
        for (final Field f : c.getDeclaredFields())
        {
            final int mod = f.getModifiers();
            if (Modifier.isStatic(mod) && Modifier.isFinal(mod) && (f.getType() == int.class || f.getType()
                == long.class) && f.getName().matches("_?[A-Z][A-Z0-9_]*"))
            {
                f.setAccessible(true);
                final String cName = f.getName().equals("MAP_FAILED") ? "(long long)(intptr_t)MAP_FAILED"
                    : f.getName();
                constant(checks, cName, ((Number)f.get(null)).longValue());
            }
        }
    }

    private static void constant(final List<Check> checks, final String cExpression, final long value)
    {
        checks.add(new Check(cExpression, cExpression, value));
    }

    /** A verbs-api constant: compared when the installed header has it. */
    private static void apiConstant(final List<Check> checks, final String cName, final long value)
    {
        checks.add(new Check(cName, cName, value, true));
    }

    private static String program(final List<Check> checks)
    {
        final StringBuilder sb = new StringBuilder();
        sb.append("#define _GNU_SOURCE\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n")
            .append("#include <pthread.h>\n#include <sys/mman.h>\n#include <sys/resource.h>\n#include <unistd.h>\n")
            .append("#include <fcntl.h>\n")
            .append("#include <infiniband/verbs.h>\n\nint main(void)\n{\n");
        for (final Check c : checks)
        {
            sb.append("    printf(\"%s\\t%lld\\n\", \"").append(c.label().replace("\"", "\\\""))
                .append("\", (long long)(")
                .append(c.cExpression()).append("));\n");
        }
        return sb.append("    return 0;\n}\n").toString();
    }
}
