//! The seccomp filter for network-off sandboxes, as a classic BPF program handed to bwrap
//! (`--seccomp FD`), which installs it right before exec'ing the command.
//!
//! Policy: `socket`/`socketpair` only for `AF_UNIX`; `io_uring_*` (which could bypass the
//! socket check), `ptrace` and `process_vm_{readv,writev}` denied; syscalls of a foreign
//! architecture or the x32 ABI denied. Everything else is allowed. Denials return `EPERM`.
//! The network namespace (`--unshare-net`) is the main cut; this is defence in depth.

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
/// Offsets into `struct seccomp_data`.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// Low 32 bits of `args[0]` (little-endian).
const OFFSET_ARG0: u32 = 16;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
/// Syscall numbers at or above this are the x32 ABI on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// One `struct sock_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BpfInstruction {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

fn stmt(code: u16, k: u32) -> BpfInstruction {
    BpfInstruction {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: usize, jf: usize) -> BpfInstruction {
    let jt = u8::try_from(jt).expect("seccomp program is far shorter than 255 instructions");
    let jf = u8::try_from(jf).expect("seccomp program is far shorter than 255 instructions");
    BpfInstruction { code, jt, jf, k }
}

fn nr(syscall: libc::c_long) -> u32 {
    u32::try_from(syscall).expect("syscall numbers are small and positive")
}

fn denied_syscalls() -> Vec<u32> {
    vec![
        nr(libc::SYS_io_uring_setup),
        nr(libc::SYS_io_uring_enter),
        nr(libc::SYS_io_uring_register),
        nr(libc::SYS_ptrace),
        nr(libc::SYS_process_vm_readv),
        nr(libc::SYS_process_vm_writev),
    ]
}

fn domain_checked_syscalls() -> Vec<u32> {
    vec![nr(libc::SYS_socket), nr(libc::SYS_socketpair)]
}

/// The network-off filter program.
pub(crate) fn network_filter() -> Vec<BpfInstruction> {
    let errno = SECCOMP_RET_ERRNO | u32::try_from(libc::EPERM).expect("EPERM is 1");
    let denied = denied_syscalls();
    let checked = domain_checked_syscalls();
    let mut prog = vec![
        stmt(BPF_LD_W_ABS, OFFSET_ARCH),
        jump(BPF_JMP_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, errno),
        stmt(BPF_LD_W_ABS, OFFSET_NR),
    ];
    // Layout after the header: [x32 check] [denied...] [checked...] ALLOW, then the domain
    // check (LD arg0, JEQ AF_UNIX, ALLOW), then the shared ERRNO return.
    let jumps_after_x32 = denied.len() + checked.len();
    // Index (relative to the instruction after the current one) of the final ERRNO.
    let errno_from = |remaining_before_allow: usize| remaining_before_allow + 1 + 3;
    prog.push(jump(
        BPF_JMP_JGE_K,
        X32_SYSCALL_BIT,
        errno_from(jumps_after_x32),
        0,
    ));
    for (i, syscall) in denied.iter().enumerate() {
        let remaining = jumps_after_x32 - i - 1;
        prog.push(jump(BPF_JMP_JEQ_K, *syscall, errno_from(remaining), 0));
    }
    for (i, syscall) in checked.iter().enumerate() {
        let remaining = checked.len() - i - 1;
        // Skip the rest of the checks and the ALLOW to land on the domain check.
        prog.push(jump(BPF_JMP_JEQ_K, *syscall, remaining + 1, 0));
    }
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    prog.push(stmt(BPF_LD_W_ABS, OFFSET_ARG0));
    prog.push(jump(
        BPF_JMP_JEQ_K,
        u32::try_from(libc::AF_UNIX).expect("AF_UNIX is 1"),
        0,
        1,
    ));
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    prog.push(stmt(BPF_RET_K, errno));
    prog
}

/// The program as the bytes of a `struct sock_filter[]` (what bwrap reads from its fd).
pub(crate) fn to_bytes(prog: &[BpfInstruction]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prog.len() * 8);
    for ins in prog {
        out.extend_from_slice(&ins.code.to_ne_bytes());
        out.push(ins.jt);
        out.push(ins.jf);
        out.extend_from_slice(&ins.k.to_ne_bytes());
    }
    out
}

/// Runs the program on one syscall, as the kernel would (for tests of the jump arithmetic).
#[cfg(test)]
pub(crate) fn simulate(prog: &[BpfInstruction], arch: u32, nr: u32, arg0: u32) -> u32 {
    let mut acc = 0;
    let mut pc = 0;
    loop {
        let ins = prog[pc];
        match ins.code {
            BPF_LD_W_ABS => {
                acc = match ins.k {
                    OFFSET_NR => nr,
                    OFFSET_ARCH => arch,
                    OFFSET_ARG0 => arg0,
                    other => panic!("unexpected load offset {other}"),
                };
                pc += 1;
            }
            BPF_JMP_JEQ_K => pc += 1 + usize::from(if acc == ins.k { ins.jt } else { ins.jf }),
            BPF_JMP_JGE_K => pc += 1 + usize::from(if acc >= ins.k { ins.jt } else { ins.jf }),
            BPF_RET_K => return ins.k,
            other => panic!("unexpected opcode {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALLOW: u32 = SECCOMP_RET_ALLOW;
    const DENY: u32 = SECCOMP_RET_ERRNO | 1;

    #[test]
    fn filter_allows_unix_sockets_and_denies_inet() {
        let prog = network_filter();
        let socket = nr(libc::SYS_socket);
        let pair = nr(libc::SYS_socketpair);
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, socket, libc::AF_UNIX as u32),
            ALLOW
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, socket, libc::AF_INET as u32),
            DENY
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, socket, libc::AF_INET6 as u32),
            DENY
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, socket, libc::AF_NETLINK as u32),
            DENY
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, pair, libc::AF_UNIX as u32),
            ALLOW
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, pair, libc::AF_INET as u32),
            DENY
        );
    }

    #[test]
    fn filter_denies_bypasses_and_allows_the_rest() {
        let prog = network_filter();
        for syscall in denied_syscalls() {
            assert_eq!(
                simulate(&prog, AUDIT_ARCH, syscall, 0),
                DENY,
                "syscall {syscall}"
            );
        }
        for ok in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_connect,
            libc::SYS_execve,
        ] {
            assert_eq!(
                simulate(&prog, AUDIT_ARCH, nr(ok), libc::AF_INET as u32),
                ALLOW
            );
        }
        assert_eq!(
            simulate(&prog, 0x4000_0003, nr(libc::SYS_read), 0),
            DENY,
            "foreign arch"
        );
        assert_eq!(
            simulate(&prog, AUDIT_ARCH, X32_SYSCALL_BIT | 41, 0),
            DENY,
            "x32 abi"
        );
        assert_eq!(to_bytes(&prog).len(), prog.len() * 8);
    }
}
