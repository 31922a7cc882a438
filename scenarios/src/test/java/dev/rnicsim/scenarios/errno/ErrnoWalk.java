package dev.rnicsim.scenarios.errno;

import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The errno paths a user reaches, each provoked through a script as a user would write it: the case names the
 * lines, the errno and words its message must hold (the limit or rule, the objects, the fix). Stateless.
 */
final class ErrnoWalk
{
    /** One host, one connectx5 device, a context, PD, CQ and 1 MiB of touched memory. */
    static final String ONE_HOST = """
        host alpha ram=256M
        device nic_a alpha profile=connectx5
        open app_a nic_a
        pd pd_a app_a
        cq cq_a app_a
        mmap buf app_a 1M
        touch buf 1M write
        """;

    /** Two connected hosts, with a registered buffer on each. */
    static final String TWO_HOSTS = """
        host alpha ram=256M
        host beta ram=256M
        device nic_a alpha profile=connectx5
        device nic_b beta profile=connectx5
        open app_a nic_a
        open app_b nic_b
        pd pd_a app_a
        pd pd_b app_b
        cq cq_a app_a
        cq cq_b app_b
        qp qp_a pd_a cq_a
        qp qp_b pd_b cq_b
        connect qp_a qp_b
        mmap src app_a 64K
        touch src 64K write
        mmap dst app_b 64K
        touch dst 64K write
        reg mr_src pd_a src 64K access=lw
        reg mr_dst pd_b dst 64K access=lw,rw,rr,ra
        """;

    private static final Pattern FAILURE = Pattern.compile("(?m)^\\s*-> (E[A-Z0-9]+): (.*)$");

    /**
     * A provoked errno.
     *
     * @param name      what it provokes.
     * @param setUp     the lines before (ONE_HOST, TWO_HOSTS or a script of its own).
     * @param lines     the lines that provoke it; the last one fails.
     * @param errno     the errno expected.
     * @param fragments words the message must hold.
     */
    record Case(String name, String setUp, String lines, String errno, List<String> fragments)
    {
        @Override
        public String toString()
        {
            return name;
        }

        /**
         * @return the failure's errno and message as the run printed them ({@code ERRNO: call: ERRNO: ...}), or
         *         the whole output when no step failed.
         */
        Outcome run()
        {
            final String script = setUp + lines + "\nexpect " + errno + "\n";
            final StringWriter out = new StringWriter();
            new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL).run("walk.rsim", script,
                Path.of("."));
            final Matcher m = FAILURE.matcher(out.toString());
            String errnoSeen = null;
            String message = null;
            while (m.find())
            {
                errnoSeen = m.group(1);
                message = m.group(2);
            }
            return new Outcome(errnoSeen, message, out.toString());
        }
    }

    /**
     * @param errno   the errno printed, or null.
     * @param message the failure line after {@code -> }, or null.
     * @param output  the whole output.
     */
    record Outcome(String errno, String message, String output)
    {
    }

    private ErrnoWalk()
    {
    }

    private static Case c(final String name, final String setUp, final String lines, final String errno,
        final String... fragments)
    {
        return new Case(name, setUp, lines, errno, List.of(fragments));
    }

    /** @return every case. */
    static List<Case> cases()
    {
        final List<Case> c = new ArrayList<>();
        // host kernel: mmap, munmap, mprotect, madvise, touch, RLIMIT_MEMLOCK
        c.add(c("mmap past the hugetlb pool", ONE_HOST, "mmap huge app_a 4M backing=2m", "ENOMEM",
            "MAP_HUGETLB", "HugePages_Free", "vm.nr_hugepages"));
        c.add(c("touch an unmapped address", ONE_HOST, "touch buf+2M 4K", "EFAULT", "SIGSEGV",
            "no VMA maps it", "mmap"));
        c.add(c("write to a read-only mapping", ONE_HOST, "mmap ro app_a 4K prot=r\nwrite ro \"x\"", "EFAULT",
            "PROT_WRITE"));
        c.add(c("munmap with a misaligned address", ONE_HOST, "munmap buf+1 4K", "EINVAL", "not aligned",
            "align"));
        c.add(c("registration past RLIMIT_MEMLOCK", """
            host alpha ram=256M
            device nic_a alpha profile=connectx5
            open app_a nic_a memlock=64K
            pd pd_a app_a
            mmap buf app_a 1M
            touch buf 1M write
            """, "reg big pd_a buf 1M", "ENOMEM", "RLIMIT_MEMLOCK", "ulimit -l"));
        // verbs on one device
        c.add(c("reg of zero bytes", ONE_HOST, "reg z pd_a buf 0", "EINVAL", "length=0",
            "at least one byte"));
        c.add(c("reg of an unmapped range", ONE_HOST, "reg far pd_a buf+2M 4K", "EFAULT"));
        c.add(c("remote write without local write", ONE_HOST, "reg w pd_a buf 4K access=rw", "EINVAL",
            "LOCAL_WRITE"));
        c.add(c("reg of read-only memory with a write right", ONE_HOST, "mmap ro app_a 4K prot=r\nreg w pd_a ro 4K",
            "EFAULT", "PROT_WRITE", "FOLL_WRITE", "register a buffer the NIC only reads with none of them"));
        c.add(c("MPT full at max_mr", """
            host alpha ram=256M
            device nic_a alpha profile=connectx5 max_mr=2
            open app_a nic_a
            pd pd_a app_a
            mmap buf app_a 1M
            touch buf 1M write
            reg one pd_a buf 4K
            reg two pd_a buf+4K 4K
            """, "reg three pd_a buf+8K 4K", "ENOMEM", "max_mr=", "deregister"));
        c.add(c("MTT exhausted on an aged host", """
            host alpha ram=256M aged=yes
            device nic_a alpha profile=connectx3 log_num_mtt=9
            open app_a nic_a memlock=unlimited
            pd pd_a app_a
            mmap buf app_a 32M
            """, "reg big pd_a buf 32M", "ENOMEM", "MTT cannot give", "largest free block",
            "register with huge pages"));
        c.add(c("QP with too many work requests", ONE_HOST, "qp q pd_a cq_a send_wr=100000000", "EINVAL",
            "max_qp_wr=", "fewer work requests"));
        c.add(c("mlx5 send queue of more basic blocks than max_send_wqebb", ONE_HOST,
            "qp q pd_a cq_a send_wr=32768", "EINVAL", "max_send_wqebb=32768", "ask for at most"));
        c.add(c("CQ with too many entries", ONE_HOST, "cq huge app_a 100000000", "EINVAL", "max_cqe=",
            "fewer"));
        c.add(c("QP with too many SGEs", ONE_HOST, "qp q pd_a cq_a sge=100000", "EINVAL", "max_sge=",
            "fewer SGEs"));
        c.add(c("dealloc of a PD in use", ONE_HOST + "reg m pd_a buf 4K\n", "dealloc pd_a", "EBUSY",
            "MR(s)", "destroy them first"));
        c.add(c("alloc_mw on a device without windows", """
            host alpha ram=256M
            device nic_a alpha profile=e810
            open app_a nic_a
            pd pd_a app_a
            """, "mw w pd_a", "EOPNOTSUPP", "MEM_WINDOW", "use a device with memory windows"));
        c.add(c("null MR on rxe", """
            host alpha ram=256M
            device nic_a alpha profile=rxe
            open app_a nic_a
            pd pd_a app_a
            """, "nullmr n pd_a", "EOPNOTSUPP", "null MRs", "mlx5"));
        c.add(c("device memory beyond max_dm_size", ONE_HOST, "dm big app_a 1G", "EINVAL", "max_dm_size"));
        c.add(c("device memory with a comp_mask", ONE_HOST, "dm d app_a 4K mask=1", "EINVAL", "comp_mask 0x1",
            "mlx5_alloc_dm", "pass comp_mask 0"));
        c.add(c("send_ops_flags the provider lacks", ONE_HOST, "qp q pd_a cq_a type=ud ops=send,write",
            "EOPNOTSUPP", "RDMA_WRITE", "mlx5_qp_fill_wr_pfns", "Leave those flags out"));
        c.add(c("send_ops_flags on a provider without create_qp_ex", """
            host alpha ram=256M
            device nic_a alpha profile=bnxt_re
            open app_a nic_a
            pd pd_a app_a
            cq cq_a app_a
            """, "qp q pd_a cq_a ops=send", "EOPNOTSUPP", "no create_qp_ex", "ibv_create_qp"));
        c.add(c("send_ops_flags on mlx4's create_qp_ex", """
            host alpha ram=256M
            device nic_a alpha profile=connectx3
            open app_a nic_a
            pd pd_a app_a
            cq cq_a app_a
            """, "qp q pd_a cq_a ops=send", "EOPNOTSUPP", "MLX4_CREATE_QP_SUP_COMP_MASK", "without send_ops_flags"));
        c.add(c("mlx4's create_qp_ex past max_qp_wr", """
            host alpha ram=256M
            device nic_a alpha profile=connectx3
            open app_a nic_a
            pd pd_a app_a
            cq cq_a app_a
            """, "qp q pd_a cq_a ops=send send_wr=100000000", "EINVAL", "max_qp_wr=", "ask for less"));
        c.add(c("device memory copy at an odd offset", ONE_HOST + "dm d app_a 4K\n", "dmwrite d 1 \"x\"",
            "EINVAL", "multiple of 4", "4-byte aligned"));
        c.add(c("device-memory MR without zero_based", ONE_HOST + "dm d app_a 4K\n",
            "regdm r pd_a d 0 4K access=lw", "EINVAL", "ZERO_BASED", "add ZERO_BASED"));
        c.add(c("fast-registration MR too large", ONE_HOST, "fastmr f pd_a 100000000", "EINVAL",
            "max_num_sg=", "max_fast_reg_page_list_len"));
        c.add(c("map more pages than the fast MR holds", ONE_HOST + "fastmr f pd_a 2\n", "map f buf 64K",
            "EINVAL", "max_num_sg=", "larger max_num_sg"));
        c.add(c("ODP on a device without it", """
            host alpha ram=256M
            device nic_a alpha profile=connectx3
            open app_a nic_a
            pd pd_a app_a
            mmap buf app_a 64K
            """, "reg o pd_a buf 64K access=odp,lw", "EOPNOTSUPP", "ON_DEMAND", "drop ON_DEMAND"));
        c.add(c("advise on an MR that is not ODP", ONE_HOST + "reg m pd_a buf 64K access=lw\n",
            "advise m prefetch", "ENOENT", "ODP", "advise only lkeys of ODP MRs"));
        c.add(c("rereg with nothing to change", ONE_HOST + "reg m pd_a buf 64K access=lw\n", "rereg m",
            "EINVAL"));
        c.add(c("query a port that does not exist", ONE_HOST, "queryport app_a 9", "EINVAL",
            "phys_port_cnt", "give a port"));
        c.add(c("query an empty GID entry", ONE_HOST, "querygid app_a 1 5", "ENODATA", "link-local GID"));
        c.add(c("a netdev MTU below Ethernet's minimum", ONE_HOST, "device nic_b alpha profile=rxe netdev_mtu=40",
            "EINVAL", "ETH_MIN_MTU", "give 1500"));
        c.add(c("a netdev address that is no IPv4 address", ONE_HOST, "device nic_b alpha profile=rxe ipv4=10.0.0",
            "EINVAL", "no IPv4 address", "four numbers"));
        c.add(c("a netdev address no host holds", ONE_HOST, "device nic_b alpha profile=rxe ipv4=224.0.0.1",
            "EINVAL", "multicast group", "give the unicast address"));
        c.add(c("a netdev address another device holds", ONE_HOST + "device nic_r alpha profile=rxe ipv4=10.0.0.1\n",
            "device nic_b alpha profile=rxe ipv4=10.0.0.1", "EINVAL", "already the IPv4 address", "RFC 5227",
            "give each device its own address"));
        c.add(c("a netdev setting on an InfiniBand port", ONE_HOST, "device nic_b alpha profile=connectx5 ipv4=10.0.0.1",
            "EINVAL", "InfiniBand link layer", "roce_gid_mgmt", "leave it out"));
        c.add(c("an address handle from an empty GID entry", ONE_HOST + "device nic_r alpha profile=rxe\n"
            + "open app_r nic_r\npd pd_r app_r\n", "ah to_a pd_r nic_a sgid_index=1", "ENODATA",
            "rdma_get_gid_attr", "no IPv4 address", "give an index"));
        final String roceQps = ONE_HOST + "device nic_r alpha profile=rxe\nopen app_r nic_r\npd pd_r app_r\n"
            + "cq cq_r app_r\nqp qp_r pd_r cq_r\nqp qp_s pd_r cq_r\n";
        c.add(c("a connection's source GID past the GID table", roceQps, "connect qp_r qp_s sgid_index=100000",
            "EINVAL", "sgid_index=100000 is outside the GID table", "fix that attribute", "nothing changed"));
        c.add(c("a connection's source GID from an empty entry", roceQps, "connect qp_r qp_s peer_sgid_index=1",
            "ENODATA", "sgid_index=1 names an empty entry", "rdma_get_gid_attr", "give an index"));
        // work requests
        c.add(c("post with too many SGEs", TWO_HOSTS,
            "post write qp_a sgl=mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,"
            + "mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,"
            + "mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8,"
            + "mr_src:8,mr_src:8,mr_src:8,mr_src:8,mr_src:8 remote=mr_dst", "ENOMEM", "max_send_sge=",
            "fewer SGEs"));
        c.add(c("inline data too long", TWO_HOSTS, "post write qp_a sgl=mr_src:64K remote=mr_dst inline",
            "ENOMEM", "max_inline_data=", "drop IBV_SEND_INLINE"));
        // strategies
        c.add(c("pool fragment freed twice", ONE_HOST + "pool p pd_a 1M chunks=2\nalloc f p 64K\nfree f\n",
            "free f", "EINVAL", "not allocated from this pool", "once"));
        c.add(c("cache handle released twice", ONE_HOST + "cache k pd_a\nacquire h k buf 64K\nrelease h\n",
            "release h", "EINVAL", "twice", "once"));
        // GPU memory
        c.add(c("cudaMalloc beyond VRAM", ONE_HOST + "gpu g alpha vram=1G\n", "gpualloc v g 2G", "ENOMEM",
            "VRAM", "allocate less"));
        c.add(c("dma-buf of a misaligned range", ONE_HOST + "gpu g alpha\ngpualloc v g 1M\n",
            "dmabuf fd v 4K 64K", "EINVAL", "64 KiB aligned"));
        // more of the host kernel
        c.add(c("a change that splits a VMA past vm.max_map_count", """
            host alpha ram=256M max_map_count=2
            device nic_a alpha profile=connectx5
            open app_a nic_a
            mmap buf app_a 64K
            """, "mprotect buf+4K 4K r", "ENOMEM", "vm.max_map_count=", "raise vm.max_map_count"));
        c.add(c("a fork-safe registration whose MADV_DONTFORK splits past vm.max_map_count", """
            host alpha ram=256M fork=legacy max_map_count=2
            device nic_a alpha profile=connectx5
            open app_a nic_a env=RDMAV_FORK_SAFE=1
            pd pd_a app_a
            mmap buf app_a 64K
            """, "reg m pd_a buf+8K 4K", "EAGAIN", "vm.max_map_count=", "raise vm.max_map_count"));
        c.add(c("a mapping past vm.max_map_count", """
            host alpha ram=256M max_map_count=1
            device nic_a alpha profile=connectx5
            open app_a nic_a
            mmap buf app_a 64K
            mmap first app_a 4K prot=r
            """, "mmap ro app_a 4K prot=r", "ENOMEM", "vm.max_map_count=", "raise vm.max_map_count"));
        c.add(c("MADV_DONTNEED inside a huge page", """
            host alpha ram=256M hugepages2m=4
            device nic_a alpha profile=connectx5
            open app_a nic_a
            mmap huge app_a 2M backing=2m
            """, "madvise huge+4K 4K dontneed", "EINVAL", "not aligned", "2048 kB"));
        c.add(c("a call of an exited process", ONE_HOST + "exit app_a\n", "mmap late app_a 4K", "EINVAL",
            "has exited", "create a new process"));
        c.add(c("registration with RLIMIT_MEMLOCK 0", """
            host alpha ram=256M
            device nic_a alpha profile=connectx5
            open app_a nic_a memlock=0
            pd pd_a app_a
            mmap buf app_a 64K
            """, "reg m pd_a buf 64K", "EPERM", "RLIMIT_MEMLOCK=0", "CAP_IPC_LOCK"));
        // registration rules
        c.add(c("an iova with another page offset", ONE_HOST, "reg m pd_a buf 4K iova=0x1001", "EINVAL",
            "iova=0x1001", "offset within"));
        c.add(c("ODP advice through another PD", ONE_HOST + "pd pd_x app_a\nreg o pd_a buf 64K access=lw,odp\n",
            "advise o prefetch pd=pd_x", "EPERM", "another PD", "advise through the PD"));
        c.add(c("PREFETCH_WRITE on an ODP MR without LOCAL_WRITE", ONE_HOST + "reg o pd_a buf 64K access=odp\n",
            "advise o prefetch_write", "EPERM", "LOCAL_WRITE", "register the MR with LOCAL_WRITE"));
        c.add(c("advice outside its MR", ONE_HOST + "reg o pd_a buf 64K access=lw,odp\n",
            "advise o prefetch buf+512K 4K", "EFAULT", "outside its MR", "inside the MR"));
        c.add(c("rereg to a PD of another context", ONE_HOST + "open app_x nic_a\npd pd_x app_x\n"
            + "reg m pd_a buf 64K\n", "rereg m pd=pd_x", "EINVAL", "CHANGE_PD", "same context"));
        c.add(c("rereg that adds ON_DEMAND", ONE_HOST + "reg m pd_a buf 64K access=lw\n",
            "rereg m access=lw,odp", "EINVAL", "ON_DEMAND", "register again"));
        c.add(c("rereg on rxe, whose provider has no rereg_mr", """
            host alpha ram=256M
            device nic_a alpha profile=rxe
            open app_a nic_a
            pd pd_a app_a
            mmap buf app_a 1M
            reg m pd_a buf 64K
            """, "rereg m addr=buf+64K", "EOPNOTSUPP", "provider has no rereg_mr", "register again"));
        // device memory
        c.add(c("device memory on a device without it", """
            host alpha ram=256M
            device nic_a alpha profile=rxe
            open app_a nic_a
            """, "dm d app_a 4K", "EOPNOTSUPP", "max_dm_size", "mlx5"));
        c.add(c("device memory past what is left", ONE_HOST + "dm a app_a 128K\n", "dm b app_a 4K", "ENOMEM",
            "free device memory first"));
        c.add(c("a copy outside the device memory", ONE_HOST + "dm d app_a 4K\n", "dmwrite d 8K \"x\"",
            "EFAULT", "outside", "inside the allocation"));
        c.add(c("a copy into freed device memory", ONE_HOST + "dm d app_a 4K\nclose d\n", "dmwrite d 0 \"x\"",
            "EINVAL", "freed", "allocate device memory again"));
        c.add(c("a device-memory MR past the allocation", ONE_HOST + "dm d app_a 4K\n",
            "regdm r pd_a d 0 8K", "EINVAL", "not inside", "inside the allocation"));
        c.add(c("a device-memory MR with a right it cannot have", ONE_HOST + "dm d app_a 4K\n",
            "regdm r pd_a d 0 4K access=lw,zb,odp", "EINVAL", "only LOCAL_WRITE", "drop"));
        // work requests
        c.add(c("a send before RTS", ONE_HOST + "mmap b2 app_a 4K\nreg m pd_a b2 4K\nqp q pd_a cq_a\n",
            "post send q sgl=m:8", "EINVAL", "RESET", "RTS"));
        c.add(c("a receive before INIT", ONE_HOST + "mmap b2 app_a 4K\nreg m pd_a b2 4K\nqp q pd_a cq_a\n",
            "recv q sgl=m:8", "EINVAL", "RESET", "INIT first"));
        c.add(c("inline with a READ", TWO_HOSTS, "post read qp_a sgl=mr_src:8 remote=mr_dst inline", "EINVAL",
            "IBV_SEND_INLINE", "drop IBV_SEND_INLINE"));
        c.add(c("an atomic of 16 bytes", TWO_HOSTS, "post faa qp_a sgl=mr_src:16 remote=mr_dst add=1", "EINVAL",
            "one SGE of 8 bytes"));
        c.add(c("a receive queue that is full", TWO_HOSTS + "qp qr pd_b cq_b recv_wr=1\nqp qs pd_a cq_a\n"
            + "connect qs qr\nrecv qr sgl=mr_dst:8\n", "recv qr sgl=mr_dst:8", "ENOMEM", "max_recv_wr=",
            "poll receive completions first"));
        // strategies and GPU memory
        c.add(c("a pool fragment larger than a chunk", ONE_HOST + "pool p pd_a 1M chunks=2\n", "alloc f p 2M",
            "EINVAL", "chunkBytes="));
        c.add(c("a closed registration cache", ONE_HOST + "cache k pd_a\nclose k\n", "acquire h k buf 64K",
            "EINVAL", "closed", "create a new cache"));
        c.add(c("cudaFree twice", ONE_HOST + "gpu g alpha\ngpualloc v g 1M\ngpufree v\n", "gpufree v", "EINVAL",
            "not a live buffer", "free each live buffer once"));
        c.add(c("GPU memory registered without a peer-memory client", """
            host alpha ram=256M peermem=no
            device nic_a alpha profile=connectx5
            open app_a nic_a
            pd pd_a app_a
            gpu g alpha
            gpualloc v g 1M
            """, "reg m pd_a v 64K", "EFAULT", "nvidia-peermem", "ibv_reg_dmabuf_mr"));
        c.add(c("a GID index past the table", ONE_HOST, "querygid app_a 1 100000", "EINVAL", "outside the table",
            "index inside"));
        // windows, queues and GPU moves
        final String window = TWO_HOSTS + "reg m2 pd_b dst 64K access=lw,rw,mw_bind\nmw w pd_b\n"
            + "bind w qp_b m2 addr=dst length=4K access=rr\n";
        // rxe_dereg_mr refuses while windows are bound; mlx5 lets the MR go
        // (ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS)
        c.add(c("dereg of an MR a window is bound to (rxe)", window.replace("profile=connectx5", "profile=rxe"),
            "dereg m2", "EINVAL", "memory window(s) are bound", "unbind"));
        c.add(c("rereg of an MR a window is bound to", window, "rereg m2 access=lw,rw", "EINVAL",
            "memory window(s) are bound", "unbind or deallocate the windows first"));
        c.add(c("a bind to an MR of another PD", TWO_HOSTS + "pd pd_c app_b\nmw w pd_c\n"
            + "reg m3 pd_b dst 64K access=lw,mw_bind\n", "bind w qp_b m3 addr=dst length=4K access=rr", "EPERM",
            "different PDs", "bind to an MR of the window's PD"));
        c.add(c("a read of memory without PROT_READ", ONE_HOST + "mprotect buf 4K none\n", "touch buf 4K", "EFAULT",
            "PROT_READ"));
        c.add(c("a receive with too many SGEs", TWO_HOSTS + "qp qr pd_b cq_b sge=1\nqp qs pd_a cq_a\nconnect qs qr\n",
            "recv qr sgl=mr_dst:8,mr_dst+8:8", "EINVAL", "max_recv_sge=", "fewer SGEs"));
        c.add(c("a pool with every chunk full", ONE_HOST + "pool p pd_a 64K chunks=1\nalloc f1 p 64K\n",
            "alloc f2 p 64K", "ENOMEM", "maxChunks=", "raise maxChunks"));
        c.add(c("a registration cache that is full", ONE_HOST + "cache k pd_a regions=1\nacquire h1 k buf 64K\n",
            "acquire h2 k buf+128K 64K", "ENOMEM", "cache full", "release handles first"));
        c.add(c("a GPU buffer moved under a peer-memory MR", """
            host alpha ram=256M peermem=yes
            device nic_a alpha profile=connectx5
            open app_a nic_a
            pd pd_a app_a
            gpu g alpha
            gpualloc v g 1M
            reg pm pd_a v 64K
            """, "gpumove v", "EBUSY", "peer-memory MR(s)", "deregister the peer-memory MRs first"));
        // access flags, fast registration and the extended registration
        c.add(c("HUGETLB without ON_DEMAND", ONE_HOST, "reg m pd_a buf 4K access=lw,hugetlb", "EINVAL", "HUGETLB",
            "drop HUGETLB or add ON_DEMAND"));
        c.add(c("HUGETLB with an iova of another 2 MiB offset", ONE_HOST,
            "reg m pd_a buf 64K access=lw,odp,hugetlb iova=0x1000", "EINVAL", "2048 kB page", "offset in that page"));
        c.add(c("map of a VALID fast-registration MR", TWO_HOSTS + "fastmr f pd_a 16\nmap f src 64K\n"
            + "post reg_mr qp_a mr=f access=lw\npoll cq_a\n", "map f src 64K", "EINVAL", "VALID",
            "invalidate it first"));
        c.add(c("an extended registration with unknown mask bits", ONE_HOST, "regex r pd_a 4K addr=buf mask=0x40",
            "EINVAL", "comp_mask", "IBV_REG_MR_MASK_"));
        // dma-buf registration
        final String gpu = ONE_HOST + "gpu g alpha\ngpualloc v g 1M\ndmabuf fd v\n";
        c.add(c("a dma-buf fd that is not open", gpu, "reg d pd_a 0 64K dmabuf=99", "EBADF", "no open dma-buf",
            "pass the fd"));
        c.add(c("a dma-buf range past its end", gpu, "reg d pd_a 0 2M dmabuf=fd", "EINVAL", "leaves the dma-buf",
            "inside the dma-buf"));
        c.add(c("a dma-buf on a device that cannot register one", """
            host alpha ram=256M
            device nic_a alpha profile=e810
            open app_a nic_a
            pd pd_a app_a
            gpu g alpha
            gpualloc v g 1M
            dmabuf fd v
            """, "reg d pd_a 0 64K dmabuf=fd", "EOPNOTSUPP", "cannot register dma-bufs",
            "use a driver (or a release of it) that registers dma-bufs"));
        // queue limits, atomics and closed pools
        c.add(c("a send queue that is full", TWO_HOSTS + "qp qs pd_a cq_a send_wr=1\nqp qd pd_b cq_b\n"
            + "connect qs qd\nengine manual\npost write qs sgl=mr_src:8 remote=mr_dst\n",
            "post write qs sgl=mr_src:8 remote=mr_dst", "ENOMEM", "max_send_wr=", "poll the send CQ"));
        c.add(c("a send queue that is full on a device that frees a slot when the work ends",
            TWO_HOSTS.replace("connectx5", "rxe") + "qp qs pd_a cq_a send_wr=1\nqp qd pd_b cq_b\n"
            + "connect qs qd\nengine manual\npost write qs sgl=mr_src:8 remote=mr_dst\n",
            "post write qs sgl=mr_src:8 remote=mr_dst", "ENOMEM", "max_send_wr=", "poll completions first"));
        c.add(c("an atomic on a device without atomics", TWO_HOSTS.replace("connectx5", "e810"),
            "post faa qp_a sgl=mr_src:8 remote=mr_dst add=1", "EOPNOTSUPP", "ATOMIC_NONE",
            "use a device with atomics"));
        c.add(c("an atomic on a device whose provider's post_send has no atomic opcode",
            TWO_HOSTS.replace("connectx5", "cxgb4"), "post faa qp_a sgl=mr_src:8 remote=mr_dst add=1", "EINVAL",
            "takes no atomic opcode", "use a device with atomics"));
        c.add(c("an allocation from a closed pool", ONE_HOST + "pool p pd_a 64K chunks=1\nclose p\n",
            "alloc f p 4K", "EINVAL", "closed", "create a new pool"));
        // huge pages on request: MADV_COLLAPSE and MAP_HUGE_*
        c.add(c("MADV_COLLAPSE of a range advised MADV_NOHUGEPAGE", ONE_HOST + "mmap t app_a 4M\n"
            + "madvise t 4M nohugepage\n", "madvise t 4M collapse", "EINVAL", "VM_NOHUGEPAGE",
            "MADV_HUGEPAGE undoes"));
        c.add(c("MADV_COLLAPSE over a VMA that forbids THP", ONE_HOST + "mmap t app_a 8M backing=thp\n"
            + "madvise t+4M 4M nohugepage\n", "madvise t 8M collapse", "EINVAL", "SCAN_VMA_CHECK",
            "give a range that covers a whole aligned"));
        c.add(c("MADV_COLLAPSE of pinned pages", """
            host alpha ram=256M thp=never
            device nic_a alpha profile=connectx5
            open app_a nic_a
            pd pd_a app_a
            mmap t app_a 4M backing=thp
            touch t 4M write
            reg m pd_a t 4M access=lw
            """, "madvise t 4M collapse", "EAGAIN", "SCAN_PAGE_COUNT",
            "deregister first"));
        c.add(c("MAP_HUGE_512MB on a host of 4 KiB pages", ONE_HOST, "mmap h app_a 512M backing=512m", "EINVAL",
            "MAP_HUGE_512MB", "give one of those sizes"));
        // shared receive queues
        c.add(c("an SRQ on a device without SRQs", """
            host alpha ram=256M
            device nic_a alpha profile=efa
            open app_a nic_a
            pd pd_a app_a
            """, "srq s pd_a", "EOPNOTSUPP", "max_srq=0", "its own receive queue"));
        c.add(c("an SRQ deeper than max_srq_wr", ONE_HOST, "srq s pd_a wr=100000000", "EINVAL", "max_srq_wr=",
            "must be"));
        c.add(c("an SRQ limit above its max_wr at creation on siw", """
            host alpha ram=256M
            device nic_a alpha profile=siw
            open app_a nic_a
            pd pd_a app_a
            """, "srq s pd_a wr=4 limit=8", "EINVAL", "srq_limit=8", "must be 0..max_wr=4", "siw_create_srq"));
        c.add(c("an SRQ limit armed above its max_wr", ONE_HOST + "srq s pd_a wr=4\n", "srqlimit s 8", "EINVAL",
            "srq_limit=8", "must be 0..max_wr=7"));
        c.add(c("a receive on a full SRQ", TWO_HOSTS + "srq s pd_b wr=1 sge=1\nrecv s sgl=mr_dst:64\n",
            "recv s sgl=mr_dst:64", "ENOMEM", "SRQ full", "larger max_wr"));
        c.add(c("a receive with more SGEs than the SRQ takes", TWO_HOSTS + "srq s pd_b wr=4 sge=1\n",
            "recv s sgl=mr_dst:64,mr_dst+64:64", "EINVAL", "max_sge=1", "create the SRQ with a larger max_sge"));
        c.add(c("a destroy of an SRQ a QP uses", TWO_HOSTS + "srq s pd_b\nqp q pd_b cq_b srq=s\n", "close s",
            "EBUSY", "still take their receives", "destroy them first"));
        c.add(c("a receive posted to a QP of an SRQ (mlx5: a receive queue of 0 entries)", TWO_HOSTS
            + "srq s pd_b\nqp q pd_b cq_b srq=s\nmodify q init pkey_index=0 port=1 access=rw\n",
            "recv q sgl=mr_dst:64", "ENOMEM", "receives from an SRQ", "mlx5_wq_overflow"));
        c.add(c("a receive posted to a QP of an SRQ (rxe refuses it)", TWO_HOSTS.replace("connectx5", "rxe")
            + "srq s pd_b\nqp q pd_b cq_b srq=s\nmodify q init pkey_index=0 port=1 access=rw\n",
            "recv q sgl=mr_dst:64", "EINVAL", "receives from an SRQ", "rxe_post_recv refuses"));
        // XRC domains, XRC SRQs and XRC QPs
        c.add(c("an XRC domain on a device without XRC", TWO_HOSTS.replace("connectx5", "rxe"), "xrcd x app_b",
            "EOPNOTSUPP", "IBV_DEVICE_XRC", "use a device with XRC"));
        final String xrc = TWO_HOSTS + "xrcd x app_b\nsrq xsrq pd_b xrcd=x cq=cq_b\n"
            + "qp xsend pd_a cq_a type=xrc_send\nqp xrecv x type=xrc_recv\nconnect xsend xrecv\n";
        c.add(c("an XRC SRQ on a CQ of another context", xrc, "srq s2 pd_b xrcd=x cq=cq_a", "EINVAL",
            "not a live CQ of this context", "IBV_SRQ_INIT_ATTR_CQ"));
        c.add(c("an XRC SRQ in a closed XRC domain", TWO_HOSTS + "xrcd y app_b\nclose y\n",
            "srq s2 pd_b xrcd=y cq=cq_b", "EINVAL", "not a live XRC domain", "ibv_open_xrcd"));
        c.add(c("a close of an XRC domain with an SRQ and a target QP", xrc, "close x", "EBUSY",
            "ib_dealloc_xrcd_user", "destroy them first"));
        c.add(c("a receive posted to an XRC_SEND QP", xrc, "recv xsend sgl=mr_src:8", "ENOMEM",
            "no receive queue", "ibv_post_srq_recv"));
        c.add(c("a send posted on an XRC_RECV QP", xrc, "post send xrecv sgl=mr_dst:8", "ENOMEM",
            "no send queue", "XRC_SEND QP"));
        // the modify_qp table, UD sends and address handles
        c.add(c("a transition the state table lacks", ONE_HOST + "qp q pd_a cq_a\n", "modify q rtr", "EINVAL",
            "ib_modify_qp_is_ok", "give exactly the attributes"));
        c.add(c("a cur_qp_state the QP is not in (mlx5)", ONE_HOST + "qp q pd_a cq_a\n"
            + "modify q init pkey_index=0 port=1 access=rw\n",
            "modify q rts timeout=14 retry=7 rnr_retry=7 sq_psn=0 max_rd_atomic=1 cur=rtr", "EINVAL",
            "is in INIT, not in cur_qp_state RTR", "leave IBV_QP_CUR_STATE out of attr_mask"));
        c.add(c("a modify_qp to a port the device lacks", ONE_HOST + "qp q pd_a cq_a\n",
            "modify q init pkey_index=0 port=9 access=rw", "EINVAL", "port_num=9", "fix that attribute"));
        final String ud = TWO_HOSTS + "qp ud_a pd_a cq_a type=ud\nmodify ud_a init pkey_index=0 port=1 qkey=0x11\n"
            + "modify ud_a rtr\nmodify ud_a rts sq_psn=0\n";
        c.add(c("a UD send without an address handle", ud, "post send ud_a sgl=mr_src:8", "EINVAL",
            "needs its destination", "postSendUd"));
        c.add(c("a UD send with an address handle of another context", ud + "ah far pd_b nic_a\n",
            "post send ud_a sgl=mr_src:8 ah=far remote_qpn=1 qkey=0x11", "EINVAL", "not a live address handle",
            "ibv_create_ah on a PD of this context"));
        c.add(c("an address handle on an RC QP", TWO_HOSTS + "ah to_b pd_a nic_b\n",
            "post send qp_a sgl=mr_src:8 ah=to_b remote_qpn=qp_b.num qkey=0x11", "EINVAL", "wr.ud is for UD QPs",
            "post without ah"));
        c.add(c("an address handle to a port the device lacks", ONE_HOST, "ah bad pd_a nic_a port=9", "EINVAL",
            "port_num=9", "fix the address vector"));
        // FLUSH
        c.add(c("a FLUSH on a device without the capability", TWO_HOSTS,
            "post flush qp_a remote=dst rkey=mr_dst.rkey length=64", "EOPNOTSUPP", "IB_UVERBS_DEVICE_"));
        final String rxe = TWO_HOSTS.replace("connectx5", "rxe");
        c.add(c("a FLUSH with a gather list", rxe,
            "post flush qp_a sgl=mr_src:8 remote=dst rkey=mr_dst.rkey length=64",
            "EINVAL", "takes no gather list", "give no sgl"));
        c.addAll(ErrnoWalkHostFidelity.cases());
        c.addAll(DeviceQueryWalk.cases());
        c.addAll(ErrnoWalkXrcAttack.cases());
        return c;
    }
}
