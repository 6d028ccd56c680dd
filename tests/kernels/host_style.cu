// Written for nvcc: helpers without __device__, a class with a constructor
// and a virtual destructor, operator new in a header-like section.
struct shape {
    float scale;
    shape(float s) : scale(s) {}
    virtual ~shape() {}
    virtual float area() const { return scale * scale; }
};
struct square : shape {
    square(float s) : shape(s) {}
    float area() const override { return 2.0f * scale * scale; }
};
inline float helper(float x) { return x * 3.0f; }
static int counter_init = 3;
template <class T> T twice(T x) { return x + x; }
extern "C" __global__ void host_style(float *out)
{
    square sq(out[0]);
    const shape &s = sq;
    shape *p = new shape(2.0f);
    out[threadIdx.x] = helper(s.area()) + twice(p->area()) + (float)counter_init;
    delete p;
}
