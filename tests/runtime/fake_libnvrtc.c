/* A library named like NVRTC that has nvrtcVersion and nothing else, to drive
 * the loader down its "not a usable NVRTC" path. */
int nvrtcVersion(int *major, int *minor);

int nvrtcVersion(int *major, int *minor)
{
    *major = 13;
    *minor = 0;
    return 0;
}
