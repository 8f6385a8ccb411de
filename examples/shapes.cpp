// Bundled example: a tiny shape library with namespaces, classes and overloads.
#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

namespace geo {

struct Point {
    double x, y;
};

double distance(Point a, Point b) {
    return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y));
}

double distance(Point a) {
    return distance(a, Point{0, 0});
}

class Polygon {
  public:
    explicit Polygon(std::vector<Point> pts) : pts_(std::move(pts)) {}
    double perimeter() const;
    bool empty() const { return pts_.empty(); }

  private:
    std::vector<Point> pts_;
};

double Polygon::perimeter() const {
    if (empty()) {
        return 0;
    }
    double p = 0;
    for (size_t i = 0; i + 1 < pts_.size(); ++i) {
        p += distance(pts_[i], pts_[i + 1]);
    }
    return p + distance(pts_.back(), pts_.front());
}

}  // namespace geo

int main() {
    std::vector<geo::Point> pts{{0, 0}, {3, 0}, {3, 4}};
    auto poly = std::make_unique<geo::Polygon>(pts);
    try {
        std::cout << poly->perimeter() << " " << geo::distance(pts[2]) << "\n";
    } catch (const std::exception &e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
