package dev.rnicsim.scenarios.script;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import dev.rnicsim.verbs.Access;
import java.util.EnumSet;
import java.util.Locale;

/**
 * The grammar of one verb: its positional arguments, its options and its flags, with a usage line that docs/scripts.md
 * and the error messages show. The table {@link #VERBS} is the language. Immutable.
 *
 * @param verb    the verb.
 * @param args    positional arguments in order.
 * @param options options by key.
 * @param flags   bare words allowed after the positional arguments.
 * @param usage   the usage line.
 */
public record Spec(String verb, List<Arg> args, Map<String, Arg> options, Set<String> flags, String usage)
{
    /** What an argument or option value must be. */
    public sealed interface Arg
    {
        /**
         * @return true when it may be left out (positional arguments: only at the end).
         */
        boolean optional();
    }

    /**
     * A new name to bind.
     *
     * @param kind     what it will name.
     * @param optional may be left out.
     */
    public record NewName(Kind kind, boolean optional) implements Arg
    {
    }

    /**
     * A name bound earlier.
     *
     * @param kinds    what it may name.
     * @param optional may be left out.
     */
    public record Ref(Set<Kind> kinds, boolean optional) implements Arg
    {
    }

    /**
     * A value: numbers with units, names, {@code name.field}, sums and differences.
     *
     * @param optional may be left out.
     */
    public record Expr(boolean optional) implements Arg
    {
    }

    /**
     * One of fixed words (several, comma-separated, when {@code list}).
     *
     * @param choices  allowed words.
     * @param list     a comma-separated list of them.
     * @param optional may be left out.
     */
    public record Word(Set<String> choices, boolean list, boolean optional) implements Arg
    {
    }

    /**
     * Bytes: a quoted string or {@code hex:...}.
     *
     * @param optional may be left out.
     */
    public record Data(boolean optional) implements Arg
    {
    }

    /**
     * A scatter/gather list: {@code SGE[,SGE...]}, each {@code ADDR:LEN[:KEY]}, or a fragment or handle name alone
     * (its whole range with its lkey).
     *
     * @param optional may be left out.
     */
    public record Sgl(boolean optional) implements Arg
    {
    }

    /**
     * A file path or free word.
     *
     * @param optional may be left out.
     */
    public record Word1(boolean optional) implements Arg
    {
    }

    /** Access words and the flags they stand for. */
    public static final Set<String> ACCESS_WORDS = Set.of("none", "local_write", "remote_write", "remote_read",
        "remote_atomic", "mw_bind", "zero_based", "on_demand", "hugetlb", "relaxed_ordering", "lw", "rw", "rr", "ra",
        "mw", "zb", "odp", "ro", "flush_global", "flush_persistent", "fg", "fp");

    private static final Set<Kind> PROCS = Set.of(Kind.CONTEXT, Kind.PROCESS);

    /** The operations of {@code post}. */
    public static final Set<String> POST_WORDS = Set.of("write", "write_imm", "read", "send", "send_imm", "cas",
        "faa", "send_inv", "local_inv", "reg_mr", "flush", "atomic_write");

    /** The words of {@code qp ... ops=}: the IBV_QP_EX_WITH_* bits of send_ops_flags, by the post words. */
    public static final Set<String> SEND_OPS_WORDS = Set.of("send", "send_imm", "send_inv", "write", "write_imm",
        "read", "cas", "faa", "local_inv", "bind_mw", "flush", "atomic_write");

    /**
     * @param words a comma list of {@link #SEND_OPS_WORDS}.
     * @return the opcodes they name (ibv_create_qp_ex(3) send_ops_flags).
     */
    public static Set<dev.rnicsim.verbs.WrOpcode> sendOps(final String words)
    {
        final Set<dev.rnicsim.verbs.WrOpcode> set = EnumSet.noneOf(dev.rnicsim.verbs.WrOpcode.class);
        for (final String w : words.toLowerCase(Locale.ROOT).split(","))
        {
            set.add(switch (w)
            {
                case "send" -> dev.rnicsim.verbs.WrOpcode.SEND;
                case "send_imm" -> dev.rnicsim.verbs.WrOpcode.SEND_WITH_IMM;
                case "send_inv" -> dev.rnicsim.verbs.WrOpcode.SEND_WITH_INV;
                case "write" -> dev.rnicsim.verbs.WrOpcode.RDMA_WRITE;
                case "write_imm" -> dev.rnicsim.verbs.WrOpcode.RDMA_WRITE_WITH_IMM;
                case "read" -> dev.rnicsim.verbs.WrOpcode.RDMA_READ;
                case "cas" -> dev.rnicsim.verbs.WrOpcode.ATOMIC_CMP_AND_SWP;
                case "faa" -> dev.rnicsim.verbs.WrOpcode.ATOMIC_FETCH_AND_ADD;
                case "local_inv" -> dev.rnicsim.verbs.WrOpcode.LOCAL_INV;
                case "bind_mw" -> dev.rnicsim.verbs.WrOpcode.BIND_MW;
                case "flush" -> dev.rnicsim.verbs.WrOpcode.FLUSH;
                case "atomic_write" -> dev.rnicsim.verbs.WrOpcode.ATOMIC_WRITE;
                default -> throw new IllegalArgumentException("'" + w + "' is no send_ops word; words: "
                    + new java.util.TreeSet<>(SEND_OPS_WORDS));
            });
        }
        return set;
    }

    /** The placement types of {@code post flush type=} ({@code enum ibv_placement_type}). */
    public static final Set<String> FLUSH_TYPE_WORDS = Set.of("global", "persistent");

    /** The selectivity levels of {@code post flush level=} ({@code enum ibv_selectivity_level}). */
    public static final Set<String> FLUSH_LEVEL_WORDS = Set.of("range", "mr");

    /** The advice of {@code advise} ({@code ibv_advise_mr}). */
    public static final Set<String> ADVICE_WORDS = Set.of("prefetch", "prefetch_write", "prefetch_no_fault");

    /** The PCIe paths of {@code gpu topology=}, as {@code nvidia-smi topo -m} names them (any case). */
    public static final Set<String> TOPOLOGY_WORDS = Set.of("pix", "pxb", "phb", "node", "sys");

    /** The word that stands for ADDR SIZE in {@code reg} to register an implicit ODP MR. */
    public static final String IMPLICIT = "implicit";

    /** The strict-mode warning kinds, as {@code strict on ignore=} takes them. */
    public static final Set<String> STRICT_KINDS = java.util.Arrays.stream(dev.rnicsim.simnic.StrictWarning.Kind
        .values()).map(k -> k.name().toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toSet());

    /** The states of {@code modify} ({@code same}: no IBV_QP_STATE in the mask, attributes changed in place). */
    public static final Set<String> QP_STATE_WORDS = Set.of("reset", "init", "rtr", "rts", "sqd", "sqe", "err",
        "same");

    /** The attributes of {@code modify ... mask=}: the IBV_QP_ names in lower case. */
    public static final Set<String> QP_ATTR_WORDS = java.util.Arrays.stream(dev.rnicsim.verbs.QpAttrMask.values())
        .map(m -> m.name().toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toSet());

    /** The operations of {@code post} that name remote memory and so need {@code remote=}. */
    public static final Set<String> REMOTE_WORDS = Set.of("write", "write_imm", "read", "cas", "faa", "flush",
        "atomic_write");

    /**
     * The language: every verb's grammar, in the order docs/scripts.md documents them. A verb added here needs a row
     * in docs/scripts.md's verb table: ScriptReferenceTest compares the two.
     */
    public static final Map<String, Spec> VERBS = table();

    private static Map<String, Spec> table()
    {
        final Map<String, Spec> t = new LinkedHashMap<>();
        add(t, "host NAME [ram=SIZE] [memlock=SIZE|unlimited] [cap_ipc_lock=yes|no] [hugepages2m=N] [hugepages1g=N]"
            + " [hugepages64k=N] [hugepages32m=N] [hugepages512m=N] [hugepages16g=N]"
            + " [thp=always|madvise|never] [fork=modern|legacy] [movable=SIZE] [swap=SIZE] [max_map_count=N]"
            + " [aged=yes|no] [peermem=yes|no] [page=4k|16k|64k] [overcommit=0|1]",
            List.of(new NewName(Kind.HOST, false)),
            opts("ram", expr(), "memlock", expr(), "cap_ipc_lock", word("yes", "no"), "hugepages2m", expr(),
                "hugepages1g", expr(), "hugepages64k", expr(), "hugepages32m", expr(), "hugepages512m", expr(),
                "hugepages16g", expr(), "thp", word("always", "madvise", "never"), "fork", word("modern", "legacy"),
                "movable", expr(), "swap", expr(), "max_map_count", expr(), "aged", word("yes", "no"), "peermem",
                word("yes", "no"), "page", word("4k", "16k", "64k"), "overcommit", word("0", "1")));
        add(t, "device NAME HOST [profile=NAME] [devinfo=FILE] [log_num_mtt=N] [log_mtts_per_seg=N] [max_mr=N]"
            + " [cache=ENTRIES] [keys=generation|random|recycled|fixed|device_counter] [dmabuf=dynamic|pinned|none]"
            + " [netdev_mtu=BYTES] [ipv4=A.B.C.D]",
            List.of(new NewName(Kind.DEVICE, false), ref(Kind.HOST)),
            opts("profile", new Word1(true), "devinfo", new Word1(true), "log_num_mtt", expr(), "log_mtts_per_seg",
                expr(), "max_mr", expr(), "cache", expr(), "keys", word("generation", "random", "recycled", "fixed",
                    "device_counter"),
                "dmabuf", word("dynamic", "pinned", "none"), "netdev_mtu", expr(), "ipv4", new Word1(true)));
        add(t, "process NAME HOST [memlock=SIZE|unlimited] [cap_ipc_lock=yes|no] [env=VAR=VALUE,...]",
            List.of(new NewName(Kind.PROCESS, false), ref(Kind.HOST)),
            opts("memlock", expr(), "cap_ipc_lock", word("yes", "no"), "env", new Word1(true)));
        add(t, "open NAME DEVICE [process=PROCESS] [memlock=SIZE|unlimited] [cap_ipc_lock=yes|no] [env=VAR=VALUE,...]",
            List.of(new NewName(Kind.CONTEXT, false), ref(Kind.DEVICE)),
            opts("process", new Ref(Set.of(Kind.PROCESS), true), "memlock", expr(), "cap_ipc_lock",
                word("yes", "no"), "env", new Word1(true)));
        add(t, "forkinit PROCESS", List.of(new Ref(PROCS, false)), Map.of());
        add(t, "mmap NAME PROCESS SIZE [backing=4k|thp|hugetlb|64k|2m|32m|512m|1g|16g] [prot=rw|r|none] [noreserve]",
            List.of(new NewName(Kind.BUFFER, false), new Ref(PROCS, false), new Expr(false)),
            opts("backing", word("4k", "thp", "hugetlb", "64k", "2m", "32m", "512m", "1g", "16g"), "prot",
                word("rw", "r", "none")), Set.of("noreserve"));
        add(t, "touch ADDR SIZE [write] [process=PROCESS]", List.of(new Expr(false), new Expr(false)),
            opts("process", new Ref(PROCS, true)), Set.of("write"));
        add(t, "write ADDR DATA [SIZE]", List.of(new Expr(false), new Data(false), new Expr(true)), Map.of());
        add(t, "munmap ADDR SIZE", List.of(new Expr(false), new Expr(false)), Map.of());
        add(t, "madvise ADDR SIZE dontneed|hugepage|nohugepage|dontfork|dofork|collapse",
            List.of(new Expr(false), new Expr(false), new Word(Set.of("dontneed", "hugepage", "nohugepage",
                "dontfork", "dofork", "collapse"), false, false)), Map.of());
        add(t, "mprotect ADDR SIZE rw|r|none", List.of(new Expr(false), new Expr(false),
            new Word(Set.of("rw", "r", "none"), false, false)), Map.of());
        add(t, "fork NAME PROCESS", List.of(new NewName(Kind.PROCESS, false), new Ref(PROCS, false)), Map.of());
        add(t, "exit PROCESS", List.of(new Ref(PROCS, false)), Map.of());
        add(t, "reclaim HOST PAGES", List.of(ref(Kind.HOST), new Expr(false)), Map.of());
        add(t, "compact HOST", List.of(ref(Kind.HOST)), Map.of());
        add(t, "pd NAME CONTEXT", List.of(new NewName(Kind.PD, false), ref(Kind.CONTEXT)), Map.of());
        add(t, "reg NAME PD ADDR SIZE [access=FLAGS] [iova=ADDR] | reg NAME PD implicit access=odp,..."
            + " | reg NAME PD OFFSET SIZE dmabuf=FD [iova=ADDR] [access=FLAGS]",
            List.of(new NewName(Kind.MR, false), ref(Kind.PD), new Expr(false), new Expr(true)),
            opts("access", new Word(ACCESS_WORDS, true, true), "iova", expr(), "dmabuf", expr()));
        add(t, "dereg MR", List.of(new Ref(Set.of(Kind.MR, Kind.FASTMR), false)), Map.of());
        add(t, "rereg MR [pd=PD] [addr=ADDR] [size=SIZE] [access=FLAGS]",
            List.of(new Ref(Set.of(Kind.MR, Kind.FASTMR), false)),
            opts("pd", new Ref(Set.of(Kind.PD), true), "addr", expr(), "size", expr(), "access",
                new Word(ACCESS_WORDS, true, true)));
        add(t, "advise MR prefetch|prefetch_write|prefetch_no_fault [ADDR SIZE] [flush] [pd=PD]",
            List.of(new Ref(Set.of(Kind.MR, Kind.FASTMR), false), new Word(ADVICE_WORDS, false, false),
                new Expr(true), new Expr(true)),
            opts("pd", new Ref(Set.of(Kind.PD), true)), Set.of("flush"));
        add(t, "gpu NAME HOST [vram=SIZE] [bar1=SIZE] [topology=PIX|PXB|PHB|NODE|SYS]",
            List.of(new NewName(Kind.GPU, false), ref(Kind.HOST)),
            opts("vram", expr(), "bar1", expr(), "topology", word(TOPOLOGY_WORDS.toArray(String[]::new))));
        add(t, "gpualloc NAME GPU SIZE", List.of(new NewName(Kind.GPU_BUFFER, false), ref(Kind.GPU),
            new Expr(false)), Map.of());
        add(t, "gpuwrite ADDR DATA [SIZE]", List.of(new Expr(false), new Data(false), new Expr(true)), Map.of());
        add(t, "gpufree GPUBUF", List.of(ref(Kind.GPU_BUFFER)), Map.of());
        add(t, "gpumove GPUBUF", List.of(ref(Kind.GPU_BUFFER)), Map.of());
        add(t, "memcpy d2h|h2d DST SRC SIZE", List.of(new Word(Set.of("d2h", "h2d"), false, false),
            new Expr(false), new Expr(false), new Expr(false)), Map.of());
        add(t, "dmabuf NAME GPUBUF [OFFSET SIZE]", List.of(new NewName(Kind.DMABUF, false), ref(Kind.GPU_BUFFER),
            new Expr(true), new Expr(true)), Map.of());
        add(t, "cq NAME CONTEXT [ENTRIES]", List.of(new NewName(Kind.CQ, false), ref(Kind.CONTEXT),
            new Expr(true)), Map.of());
        add(t, "qp NAME PD|XRCD [CQ] [type=rc|uc|ud|xrc_send|xrc_recv] [srq=SRQ] [send_wr=N] [recv_wr=N] [sge=N]"
            + " [inline=N] [ops=OPS]",
            List.of(new NewName(Kind.QP, false), new Ref(Set.of(Kind.PD, Kind.XRCD), false),
                new Ref(Set.of(Kind.CQ), true)),
            opts("type", word("rc", "uc", "ud", "xrc_send", "xrc_recv"), "srq", new Ref(Set.of(Kind.SRQ), true),
                "send_wr", expr(), "recv_wr", expr(), "sge", expr(), "inline", expr(),
                "ops", new Word(SEND_OPS_WORDS, true, true)));
        add(t, "connect QP QP [access=FLAGS] [rnr_retry=N] [min_rnr_timer=N] [retry=N] [sgid_index=N]"
            + " [peer_sgid_index=N]",
            List.of(ref(Kind.QP), ref(Kind.QP)),
            opts("access", new Word(ACCESS_WORDS, true, true), "rnr_retry", expr(), "min_rnr_timer", expr(),
                "retry", expr(), "sgid_index", expr(), "peer_sgid_index", expr()));
        add(t, "post write|write_imm|read|send|send_imm|cas|faa|send_inv|local_inv|reg_mr|flush|atomic_write QP"
            + " [sgl=SGL] [remote=ADDR] [rkey=KEY] [imm=N] [compare=N] [swap=N] [add=N] [mr=FASTMR] [key=KEY]"
            + " [access=FLAGS] [length=SIZE] [type=global|persistent] [level=range|mr] [value=N] [id=N]"
            + " [unsignaled] [inline] [fence]",
            List.of(new Word(POST_WORDS, false, false), ref(Kind.QP)),
            opts("sgl", new Sgl(true), "remote", expr(), "rkey", expr(), "imm", expr(), "compare", expr(),
                "swap", expr(), "add", expr(), "mr", new Ref(Set.of(Kind.FASTMR), true), "key", expr(), "access",
                new Word(ACCESS_WORDS, true, true), "length", expr(), "type", new Word(FLUSH_TYPE_WORDS, false, true),
                "level", new Word(FLUSH_LEVEL_WORDS, false, true), "value", expr(), "id", expr(), "ah",
                new Ref(Set.of(Kind.AH), true), "remote_qpn", expr(), "qkey", expr(), "remote_srqn", expr()), Set.of("unsignaled", "inline", "fence"));
        add(t, "recv QP|SRQ [sgl=SGL] [id=N]", List.of(new Ref(Set.of(Kind.QP, Kind.SRQ), false)),
            opts("sgl", new Sgl(true), "id", expr()));
        add(t, "poll CQ [N]", List.of(ref(Kind.CQ), new Expr(true)), Map.of());
        add(t, "progress DEVICE [N]", List.of(ref(Kind.DEVICE), new Expr(true)), Map.of());
        add(t, "engine auto|manual", List.of(new Word(Set.of("auto", "manual"), false, false)), Map.of());
        add(t, "modify QP reset|init|rtr|rts|sqd|sqe|err|same [access=FLAGS] [port=N] [pkey_index=N] [qkey=N]"
            + " [dest=QP] [av=QP] [dest_qpn=N] [path_mtu=BYTES] [rq_psn=N] [sq_psn=N] [timeout=N] [retry=N]"
            + " [rnr_retry=N] [min_rnr_timer=N] [max_rd_atomic=N] [max_dest_rd_atomic=N] [cur=STATE] [mask=ATTRS]"
            + " [sgid_index=N] [lid_only]",
            List.of(ref(Kind.QP), new Word(QP_STATE_WORDS, false, false)),
            opts("access", new Word(ACCESS_WORDS, true, true), "port", expr(), "pkey_index", expr(), "qkey", expr(),
                "dest", new Ref(Set.of(Kind.QP), true), "av", new Ref(Set.of(Kind.QP), true), "dest_qpn", expr(),
                "path_mtu", expr(), "rq_psn", expr(), "sq_psn", expr(), "timeout", expr(), "retry", expr(),
                "rnr_retry", expr(), "min_rnr_timer", expr(), "max_rd_atomic", expr(), "max_dest_rd_atomic", expr(),
                "cur", new Word(QP_STATE_WORDS, false, true), "mask", new Word(QP_ATTR_WORDS, true, true),
                "sgid_index", expr()), Set.of("lid_only"));
        add(t, "queryqp QP", List.of(ref(Kind.QP)), Map.of());
        add(t, "srq NAME PD [wr=N] [sge=N] [limit=N] [xrcd=XRCD cq=CQ]", List.of(new NewName(Kind.SRQ, false),
            ref(Kind.PD)), opts("wr", expr(), "sge", expr(), "limit", expr(), "xrcd", new Ref(Set.of(Kind.XRCD), true),
            "cq", new Ref(Set.of(Kind.CQ), true)));
        add(t, "xrcd NAME CONTEXT", List.of(new NewName(Kind.XRCD, false), ref(Kind.CONTEXT)), Map.of());
        add(t, "srqlimit SRQ N", List.of(ref(Kind.SRQ), new Expr(false)), Map.of());
        add(t, "ah NAME PD DEVICE [port=N] [sgid_index=N] [dgid_index=N] [lid_only]", List.of(
            new NewName(Kind.AH, false), ref(Kind.PD), ref(Kind.DEVICE)), opts("port", expr(), "sgid_index", expr(),
            "dgid_index", expr()), Set.of("lid_only"));
        add(t, "watch NAME DEVICE flag=ADDR data=ADDR length=SIZE [value=N]",
            List.of(new NewName(Kind.WATCH, false), ref(Kind.DEVICE)),
            opts("flag", expr(), "data", expr(), "length", expr(), "value", expr()));
        add(t, "mw NAME PD [type=1|2]", List.of(new NewName(Kind.MW, false), ref(Kind.PD)),
            opts("type", new Word1(true)));
        add(t, "bind MW QP MR [addr=ADDR] [length=SIZE] [access=FLAGS] [rkey=KEY] [id=N] [unsignaled]",
            List.of(ref(Kind.MW), ref(Kind.QP), ref(Kind.MR)),
            opts("addr", expr(), "length", expr(), "access", new Word(ACCESS_WORDS, true, true), "rkey", expr(),
                "id", expr()), Set.of("unsignaled"));
        add(t, "unbind MW QP [id=N] [unsignaled]", List.of(ref(Kind.MW), ref(Kind.QP)), opts("id", expr()),
            Set.of("unsignaled"));
        add(t, "fastmr NAME PD PAGES", List.of(new NewName(Kind.FASTMR, false), ref(Kind.PD), new Expr(false)),
            Map.of());
        add(t, "map FASTMR ADDR SIZE", List.of(ref(Kind.FASTMR), new Expr(false), new Expr(false)), Map.of());
        add(t, "pool NAME PD CHUNK [chunks=N] [min=SIZE] [backing=4k|thp|2m|1g] [access=FLAGS]",
            List.of(new NewName(Kind.POOL, false), ref(Kind.PD), new Expr(false)),
            opts("chunks", expr(), "min", expr(), "backing", word("4k", "thp", "2m", "1g"), "access",
                new Word(ACCESS_WORDS, true, true)));
        add(t, "alloc NAME POOL SIZE", List.of(new NewName(Kind.FRAGMENT, false), ref(Kind.POOL), new Expr(false)),
            Map.of());
        add(t, "free FRAGMENT", List.of(ref(Kind.FRAGMENT)), Map.of());
        add(t, "cache NAME PD [regions=N] [bytes=SIZE] [hook=yes|no]",
            List.of(new NewName(Kind.CACHE, false), ref(Kind.PD)),
            opts("regions", expr(), "bytes", expr(), "hook", word("yes", "no")));
        add(t, "acquire NAME CACHE ADDR SIZE [access=FLAGS]",
            List.of(new NewName(Kind.HANDLE, false), ref(Kind.CACHE), new Expr(false), new Expr(false)),
            opts("access", new Word(ACCESS_WORDS, true, true)));
        add(t, "release HANDLE", List.of(ref(Kind.HANDLE)), Map.of());
        add(t, "invalidate CACHE ADDR SIZE", List.of(ref(Kind.CACHE), new Expr(false), new Expr(false)), Map.of());
        add(t, "dealloc PD", List.of(ref(Kind.PD)), Map.of());
        add(t, "queryport CONTEXT [PORT]", List.of(ref(Kind.CONTEXT), new Expr(true)), Map.of());
        add(t, "events CONTEXT", List.of(ref(Kind.CONTEXT)), Map.of());
        add(t, "querygid CONTEXT PORT INDEX", List.of(ref(Kind.CONTEXT), new Expr(false), new Expr(false)), Map.of());
        add(t, "querypkey CONTEXT PORT INDEX", List.of(ref(Kind.CONTEXT), new Expr(false), new Expr(false)), Map.of());
        add(t, "gidtable CONTEXT [MAX]", List.of(ref(Kind.CONTEXT), new Expr(true)), Map.of());
        add(t, "nullmr NAME PD", List.of(new NewName(Kind.MR, false), ref(Kind.PD)), Map.of());
        add(t, "dm NAME CONTEXT SIZE [mask=N] [align=N]", List.of(new NewName(Kind.DM, false), ref(Kind.CONTEXT),
            new Expr(false)), opts("mask", expr(), "align", expr()));
        add(t, "dmwrite DM OFFSET DATA", List.of(ref(Kind.DM), new Expr(false), new Data(false)), Map.of());
        add(t, "dmread DM OFFSET ADDR SIZE", List.of(ref(Kind.DM), new Expr(false), new Expr(false),
            new Expr(false)), Map.of());
        add(t, "regdm NAME PD DM OFFSET SIZE [access=FLAGS]", List.of(new NewName(Kind.MR, false), ref(Kind.PD),
            ref(Kind.DM), new Expr(false), new Expr(false)), opts("access", new Word(ACCESS_WORDS, true, true)));
        add(t, "regex NAME PD SIZE [addr=ADDR] [dmabuf=FD] [offset=N] [iova=ADDR] [access=FLAGS] [mask=N]",
            List.of(new NewName(Kind.MR, false), ref(Kind.PD), new Expr(false)),
            opts("addr", expr(), "dmabuf", expr(), "offset", expr(), "iova", expr(), "access",
                new Word(ACCESS_WORDS, true, true), "mask", expr()));
        add(t, "strict on|off [max_reg_rate=N] [ignore=KINDS]", List.of(new Word(Set.of("on", "off"), false, false)),
            opts("max_reg_rate", expr(), "ignore", new Word(STRICT_KINDS, true, true)));
        add(t, "close NAME", List.of(new Ref(Set.of(Kind.CONTEXT, Kind.PD, Kind.MR, Kind.FASTMR, Kind.MW, Kind.CQ,
            Kind.QP, Kind.POOL, Kind.CACHE, Kind.DMABUF, Kind.WATCH, Kind.DM, Kind.SRQ, Kind.AH, Kind.XRCD), false)),
            Map.of());
        add(t, "show mr|odp|mw|qp|walk|mtt|counters|trace|devinfo|meminfo|vmstat|buddyinfo|hugepages|status|smaps"
            + "|clock|pool|cache|gpu|forkinit|inflight [NAME|ADDR] | show rdma res mr|pd|qp|cq [DEVICE]"
            + " | show rdma statistic [DEVICE]",
            List.of(new Word(Set.of("mr", "odp", "mw", "qp", "walk", "mtt", "counters", "trace", "devinfo", "meminfo",
                "vmstat", "buddyinfo", "hugepages", "status", "smaps", "clock", "pool", "cache", "gpu", "forkinit",
                "inflight", "rdma"), false, false),
                new Expr(true)),
            Map.of());
        add(t, "let NAME EXPR", List.of(new NewName(Kind.VALUE, false), new Expr(false)), Map.of());
        add(t, "repeat N STATEMENT | repeat N ... end", List.of(), Map.of());
        add(t, "expect ok|ERRNO|STATUS | expect EXPR OP EXPR | expect bytes ADDR DATA", List.of(), Map.of());
        add(t, "say TEXT", List.of(), Map.of());
        return t;
    }

    private static void add(final Map<String, Spec> t, final String usage, final List<Arg> args,
        final Map<String, Arg> options)
    {
        add(t, usage, args, options, Set.of());
    }

    private static void add(final Map<String, Spec> t, final String usage, final List<Arg> args,
        final Map<String, Arg> options, final Set<String> flags)
    {
        final String verb = usage.substring(0, usage.indexOf(' '));
        t.put(verb, new Spec(verb, args, options, flags, usage));
    }

    private static Map<String, Arg> opts(final Object... pairs)
    {
        final Map<String, Arg> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2)
        {
            m.put((String)pairs[i], (Arg)pairs[i + 1]);
        }
        return m;
    }

    private static Expr expr()
    {
        return new Expr(true);
    }

    private static Word word(final String... choices)
    {
        return new Word(Set.copyOf(Arrays.asList(choices)), false, true);
    }

    private static Ref ref(final Kind kind)
    {
        return new Ref(Set.of(kind), false);
    }

    /**
     * @return the required positional arguments.
     */
    public int required()
    {
        int n = 0;
        for (final Arg a : args)
        {
            if (!a.optional())
            {
                n++;
            }
        }
        return n;
    }

    /**
     * @return the usage lines of every verb.
     */
    public static List<String> usages()
    {
        final List<String> out = new ArrayList<>();
        for (final Spec s : VERBS.values())
        {
            out.add(s.usage());
        }
        return out;
    }

    /**
     * @param words comma-separated access words ({@link #ACCESS_WORDS}): long names or their short forms.
     * @return the flags they name.
     * @throws IllegalArgumentException naming a word that is none of them.
     */
    public static Set<Access> accessFlags(final String words)
    {
        final Set<Access> set = EnumSet.noneOf(Access.class);
        for (final String w : words.toLowerCase(Locale.ROOT).split(","))
        {
            switch (w)
            {
                case "none" ->
                {
                }
                case "lw", "local_write" -> set.add(Access.LOCAL_WRITE);
                case "rw", "remote_write" -> set.add(Access.REMOTE_WRITE);
                case "rr", "remote_read" -> set.add(Access.REMOTE_READ);
                case "ra", "remote_atomic" -> set.add(Access.REMOTE_ATOMIC);
                case "mw", "mw_bind" -> set.add(Access.MW_BIND);
                case "zb", "zero_based" -> set.add(Access.ZERO_BASED);
                case "odp", "on_demand" -> set.add(Access.ON_DEMAND);
                case "hugetlb" -> set.add(Access.HUGETLB);
                case "ro", "relaxed_ordering" -> set.add(Access.RELAXED_ORDERING);
                case "fg", "flush_global" -> set.add(Access.FLUSH_GLOBAL);
                case "fp", "flush_persistent" -> set.add(Access.FLUSH_PERSISTENT);
                default -> throw new IllegalArgumentException("'" + w + "' is no access word; words: "
                    + new java.util.TreeSet<>(ACCESS_WORDS));
            }
        }
        return set;
    }
}
